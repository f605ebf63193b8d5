import AppStoreWire
import Crypto
import Foundation
import StorekeeperCore

/// Signs the server's answers to the app, so the app can tell them from a proxy's or a jailbroken device's: a
/// membership shown to the user is one this server granted.
///
/// When the app sends `Storekeeper-Nonce` (22–128 base64url characters, fresh for each request), a 2xx answer of a
/// client operation carries `Storekeeper-Signature`: a compact ES256 JWS whose payload binds the nonce, the request
/// (`"GET /v1/me"`, with its query), the status, the SHA-256 of the exact body bytes, and who asked: the caller's user
/// id (`sub`) and the digest of the credential presented (`cred`). The app pins the public key and checks them all: a
/// tampered body, an answer replayed for another request or path, or one given to another account's credentials (a
/// proxy that swaps them) is refused.
public struct AnswerSigner: Sendable {
    public static let nonceHeader = "Storekeeper-Nonce"
    public static let signatureHeader = "Storekeeper-Signature"

    private let key: P256.Signing.PrivateKey
    private let encodedHeader: String
    /// The first 16 base64url characters of the SHA-256 of the public key's DER: names the key, for rotation.
    public let keyId: String

    /// - Parameter privateKeyPEM: a P-256 private key (PKCS#8 or SEC1 PEM).
    public init(privateKeyPEM: String) throws {
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        } catch {
            throw ConfigurationError.invalid("auth.answerSigningKey is not a P-256 private key in PEM")
        }
        keyId = String(Base64URL.encode(Array(SHA256.hash(data: key.publicKey.derRepresentation))).prefix(16))
        encodedHeader = try SignedToken.encode(header: SignedToken.Header(alg: "ES256", kid: keyId, typ: "storekeeper-answer"))
    }

    /// The public key the app pins, in PEM.
    public var publicKeyPEM: String { key.publicKey.pemRepresentation }

    /// Whether `nonce` is one the server signs for (the app makes 16+ random bytes, base64url).
    public static func isValidNonce(_ nonce: Substring) -> Bool {
        (22...128).contains(nonce.utf8.count)
            && nonce.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D
                    || byte == 0x5F
            }
    }

    /// The signature for an answer with `status` and `body` to `request` (method, a space, the path with its query).
    public func signature(
        nonce: Substring,
        request: String,
        status: Int,
        body: UnsafeRawBufferPointer,
        caller: ClientIdentity? = nil,
        at now: Date
    ) throws -> String {
        struct Payload: Encodable {
            var cred: String?
            var iat: Int64
            var nonce: String
            var request: String
            var sha256: String
            var status: Int
            var sub: String?
        }
        let payload = Payload(
            cred: caller?.credential,
            iat: Int64(now.timeIntervalSince1970.rounded(.down)),
            nonce: String(nonce),
            request: request,
            sha256: Base64URL.encode(Array(SHA256.hash(data: body))),
            status: status,
            sub: caller?.user?.rawValue
        )
        return try SignedToken.sign(encodedHeader: encodedHeader, claims: try SignedToken.encoder().encode(payload), with: key)
    }
}
