import Crypto
import Foundation

/// Checks the server's signed answers (`Storekeeper-Signature`) against the public key the app pins, so a proxy or a
/// jailbroken device cannot show the user a membership the server never granted.
///
/// The signature is an ES256 JWS whose payload binds the nonce the SDK sent with this request, the request itself,
/// the status, the SHA-256 of the exact body and the digest of the credentials the SDK sent: a tampered body, an
/// answer replayed from another request (an older one from when the user was subscribed), one for another path, or
/// one the server gave to another account's credentials (a proxy that swapped them) is refused.
public struct AnswerVerifier: Sendable {
    private let key: P256.Signing.PublicKey

    /// - Parameter publicKeyPEM: the public half of the server's `auth.answerSigningKey`, shipped in the app.
    public init(publicKeyPEM: String) throws {
        key = try P256.Signing.PublicKey(pemRepresentation: publicKeyPEM)
    }

    /// An answer the SDK refused to believe; nothing from it reached the app.
    public struct Untrusted: Error, Sendable, Hashable, CustomStringConvertible {
        public var reason: String
        public var description: String { "the server's answer is not trusted: \(reason)" }
    }

    struct Claims: Decodable {
        var cred: String?
        var nonce: String
        var request: String
        var sha256: String
        var status: Int
    }

    /// Throws ``Untrusted`` unless `signature` is the pinned key's over exactly this nonce, request, status, body and
    /// credential digest (``digest(of:)`` of what the SDK sent; `nil` when it sent none).
    func verify(signature: String?, nonce: String, request: String, status: Int, body: [UInt8], credential: String?) throws {
        guard let signature else { throw Untrusted(reason: "the answer is not signed") }
        let parts = signature.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Self.base64URL(parts[0]), let payload = Self.base64URL(parts[1]),
            let raw = Self.base64URL(parts[2])
        else { throw Untrusted(reason: "the signature is not a compact JWS") }
        guard let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            header["alg"] as? String == "ES256", header["typ"] as? String == "storekeeper-answer"
        else { throw Untrusted(reason: "the signature's header is not an ES256 Storekeeper answer") }
        guard let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: raw),
            key.isValidSignature(ecdsa, for: Array("\(parts[0]).\(parts[1])".utf8))
        else { throw Untrusted(reason: "the signature does not verify with the pinned key") }
        guard let claims = try? JSONDecoder().decode(Claims.self, from: Data(payload)) else {
            throw Untrusted(reason: "the signed claims cannot be read")
        }
        guard claims.nonce == nonce else { throw Untrusted(reason: "the answer was signed for another request (nonce)") }
        guard claims.request == request else { throw Untrusted(reason: "the answer was signed for \(claims.request), not \(request)") }
        guard claims.status == status else { throw Untrusted(reason: "the answer was signed with status \(claims.status), not \(status)") }
        guard claims.cred == credential else { throw Untrusted(reason: "the answer was signed for other credentials than the ones sent") }
        let digest: [UInt8] = Array(SHA256.hash(data: body))
        guard let signed = Self.base64URL(Substring(claims.sha256)), signed == digest else {
            throw Untrusted(reason: "the body is not the one the server signed")
        }
    }

    /// The digest of a credential as the server signs it: base64url SHA-256 of the token.
    static func digest(of credential: String) -> String {
        Data(SHA256.hash(data: Data(credential.utf8))).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// A fresh nonce: 16 random bytes, base64url.
    static func nonce() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func base64URL(_ text: Substring) -> [UInt8]? {
        guard text.utf8.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "=") }) else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).map { [UInt8]($0) }
    }
}
