import Crypto
import Foundation

/// Signs the ES256 bearer tokens (JWT) the App Store Server API requires, one per request.
///
/// Header `{alg: ES256, kid, typ: JWT}`, claims `{iss, iat, exp, aud: "appstoreconnect-v1", bid}`; the
/// signature is raw R‖S, base64url. The private key never appears in descriptions, dumps or errors.
public struct AppStoreAPITokenGenerator: Sendable {
    /// The JWT `aud` Apple expects.
    public static let audience = "appstoreconnect-v1"
    /// Apple's ceiling on `exp - iat`.
    public static let maximumLifetimeSeconds = 3600

    /// The key id of the In-App Purchase key (JWT header `kid`).
    public let keyId: String
    /// The issuer id of the App Store Connect team (claim `iss`).
    public let issuerId: String
    /// The app's bundle id (claim `bid`).
    public let bundleId: String
    /// Seconds between `iat` and `exp` (default 5 minutes, at most 60).
    public let tokenLifetimeSeconds: Int
    // The scalar, not the key object: swift-crypto's key type is not Sendable, the bytes are.
    private let privateKeyScalar: Data

    /// - Parameter privateKeyPEM: the contents of the `.p8` file (PKCS#8 PEM).
    public init(
        privateKeyPEM: String,
        keyId: String,
        issuerId: String,
        bundleId: String,
        tokenLifetimeSeconds: Int = 300
    ) throws {
        let key: P256.Signing.PrivateKey
        do {
            key = try P256.Signing.PrivateKey(
                pemRepresentation: privateKeyPEM.trimmingCharacters(in: .whitespacesAndNewlines)
            )
        } catch {
            // Deliberately drop the underlying error: nothing about the key may leak into logs.
            throw AppStoreAPITokenError.invalidPrivateKey
        }
        try self.init(
            privateKey: key,
            keyId: keyId,
            issuerId: issuerId,
            bundleId: bundleId,
            tokenLifetimeSeconds: tokenLifetimeSeconds
        )
    }

    public init(
        privateKey: P256.Signing.PrivateKey,
        keyId: String,
        issuerId: String,
        bundleId: String,
        tokenLifetimeSeconds: Int = 300
    ) throws {
        guard (1...Self.maximumLifetimeSeconds).contains(tokenLifetimeSeconds) else {
            throw AppStoreAPITokenError.invalidTokenLifetime(seconds: tokenLifetimeSeconds)
        }
        for (name, value) in [("keyId", keyId), ("issuerId", issuerId), ("bundleId", bundleId)] where value.isEmpty {
            throw AppStoreAPITokenError.missingIdentity(name)
        }
        self.privateKeyScalar = privateKey.rawRepresentation
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.tokenLifetimeSeconds = tokenLifetimeSeconds
    }

    /// A compact JWS `header.claims.signature`, issued at `now`.
    public func makeToken(now: Date = Date()) throws -> String {
        try SignedToken.bearer(
            keyId: keyId,
            issuer: issuerId,
            bundleId: bundleId,
            lifetime: tokenLifetimeSeconds,
            now: now,
            key: try P256.Signing.PrivateKey(rawRepresentation: privateKeyScalar)
        )
    }
}

extension AppStoreAPITokenGenerator: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    // The private key must stay out of logs, `print`, `dump` and debugger summaries.
    public var description: String {
        "AppStoreAPITokenGenerator(keyId: \(keyId), issuerId: \(issuerId), bundleId: \(bundleId), "
            + "tokenLifetimeSeconds: \(tokenLifetimeSeconds), privateKey: <redacted>)"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "keyId": keyId, "issuerId": issuerId, "bundleId": bundleId,
                "tokenLifetimeSeconds": tokenLifetimeSeconds, "privateKey": "<redacted>",
            ]
        )
    }
}
