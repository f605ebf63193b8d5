import Crypto
import Foundation

/// Signs the ES256 bearer tokens (JWT) the App Store Connect API takes: header `{alg: ES256, kid, typ: JWT}`, claims
/// `{iss, iat, exp, aud: "appstoreconnect-v1"}` and no bundle id (a team key, not an app's In-App Purchase key).
/// Apple refuses tokens that live longer than 20 minutes.
public struct AppStoreConnectTokenGenerator: Sendable {
    public static let audience = AppStoreAPITokenGenerator.audience
    /// Apple's ceiling on `exp - iat` for the App Store Connect API.
    public static let maximumLifetimeSeconds = 1_200

    public let keyId: String
    public let issuerId: String
    public let tokenLifetimeSeconds: Int
    // The scalar, not the key object: swift-crypto's key type is not Sendable, the bytes are.
    private let privateKeyScalar: Data

    /// - Parameter privateKeyPEM: the `.p8` file of an App Store Connect API key with the Sales or Finance role.
    public init(privateKeyPEM: String, keyId: String, issuerId: String, tokenLifetimeSeconds: Int = 600) throws {
        let key: P256.Signing.PrivateKey
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM.trimmingCharacters(in: .whitespacesAndNewlines))
        } catch {
            throw AppStoreAPITokenError.invalidPrivateKey
        }
        guard (1...Self.maximumLifetimeSeconds).contains(tokenLifetimeSeconds) else {
            throw AppStoreAPITokenError.invalidTokenLifetime(seconds: tokenLifetimeSeconds)
        }
        for (name, value) in [("keyId", keyId), ("issuerId", issuerId)] where value.isEmpty {
            throw AppStoreAPITokenError.missingIdentity(name)
        }
        privateKeyScalar = key.rawRepresentation
        self.keyId = keyId
        self.issuerId = issuerId
        self.tokenLifetimeSeconds = tokenLifetimeSeconds
    }

    /// A compact JWS issued at `now`.
    public func makeToken(now: Date = Date()) throws -> String {
        try SignedToken.bearer(
            keyId: keyId,
            issuer: issuerId,
            bundleId: nil,
            lifetime: tokenLifetimeSeconds,
            now: now,
            key: try P256.Signing.PrivateKey(rawRepresentation: privateKeyScalar)
        )
    }
}

extension AppStoreConnectTokenGenerator: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "AppStoreConnectTokenGenerator(keyId: \(keyId), issuerId: \(issuerId), tokenLifetimeSeconds: \(tokenLifetimeSeconds), privateKey: <redacted>)"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["keyId": keyId, "issuerId": issuerId, "privateKey": "<redacted>"])
    }
}
