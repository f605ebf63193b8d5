import Crypto
import Foundation
import GooglePlayWire
import SwiftASN1
import WebTokens
import X509
import _CryptoExtras

/// The simulator's stand-in for Google's ID-token keys: RSA keys under `kid`s, published the two ways Google
/// publishes its own (a map of PEM certificates, and a JWKS), signing the OIDC token of each Pub/Sub push. Two keys
/// are live at a time, the newer one signing, as at Google when it rotates.
public struct PlayPushSigning: Sendable {
    public struct Key: Sendable {
        public var kid: String
        public var privateKey: _RSA.Signing.PrivateKey
        public var certificatePEM: String
    }

    public private(set) var keys: [Key]
    private var generation = 0

    public init() throws {
        keys = []
        try rotate()
    }

    /// A new signing key; the previous one stays published (tokens it signed still verify), older ones go.
    public mutating func rotate() throws {
        generation += 1
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let name = try DistinguishedName { CommonName("Storekeeper Play simulator push key \(generation)") }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(key.publicKey),
            notValidBefore: Date(timeIntervalSince1970: 1_700_000_000),
            notValidAfter: Date(timeIntervalSince1970: 2_000_000_000),
            issuer: name,
            subject: name,
            signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: .init(),
            issuerPrivateKey: .init(key)
        )
        keys = Array(
            ([Key(kid: "sim-push-\(generation)", privateKey: key, certificatePEM: try certificate.serializeAsPEM().pemString)] + keys).prefix(2)
        )
    }

    /// `{kid: PEM certificate}`, as `https://www.googleapis.com/oauth2/v1/certs` answers.
    public func pemMap() -> [String: String] {
        Dictionary(uniqueKeysWithValues: keys.map { ($0.kid, $0.certificatePEM) })
    }

    /// `{"keys": [...]}`, as `https://www.googleapis.com/oauth2/v3/certs` answers.
    public func jwks() throws -> [String: [[String: String]]] {
        [
            "keys": try keys.map { key in
                let primitives = try key.privateKey.publicKey.getKeyPrimitives()
                return [
                    "kid": key.kid, "kty": "RSA", "alg": "RS256", "use": "sig",
                    "n": Base64URL.encode(primitives.modulus), "e": Base64URL.encode(primitives.publicExponent),
                ]
            }
        ]
    }

    /// The OIDC token Pub/Sub would send for `serviceAccountEmail`, for `audience`, issued at `now` (wall clock:
    /// receivers check it against theirs), valid an hour.
    public func token(audience: String, serviceAccountEmail: String, now: Date) throws -> String {
        struct Claims: Encodable {
            var iss = "https://accounts.google.com"
            var aud: String
            var azp: String
            var sub: String
            var email: String
            var email_verified = true
            var iat: Int64
            var exp: Int64
        }
        let issued = Int64(now.timeIntervalSince1970.rounded(.down))
        // A service account's numeric id: stable per e-mail, as Google's are.
        let subject = String(SHA256.hash(data: Data(serviceAccountEmail.utf8)).prefix(6).reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        return try SignedToken.sign(
            header: .init(alg: "RS256", kid: keys[0].kid, typ: "JWT"),
            claims: Claims(aud: audience, azp: subject, sub: subject, email: serviceAccountEmail, iat: issued, exp: issued + 3600),
            with: keys[0].privateKey
        )
    }
}
