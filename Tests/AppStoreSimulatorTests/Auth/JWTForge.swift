import AppStoreWire
import Crypto
import Foundation

/// Hand-made compact JWS for the cases no honest signer produces: odd headers, out-of-policy claims, tampering.
enum JWTForge {
    /// `header` and `claims` are JSON text, signed ES256 (raw R‖S) by `key`.
    static func es256(header: String, claims: String, key: P256.Signing.PrivateKey) throws -> String {
        let input = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(claims.utf8))
        let signature = try key.signature(for: Data(input.utf8)).rawRepresentation
        return input + "." + Base64URL.encode(signature)
    }

    /// The same, "signed" with HMAC-SHA256: what an algorithm-confusion attack would send.
    static func hs256(header: String, claims: String, secret: Data) -> String {
        let input = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(claims.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: secret))
        return input + "." + Base64URL.encode(Data(mac))
    }

    /// An `alg: none` token: no signature segment at all.
    static func unsigned(header: String, claims: String) -> String {
        Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(claims.utf8)) + "."
    }

    /// `token` with its payload replaced by `claims` and the original signature kept.
    static func replacingPayload(of token: String, with claims: String) -> String {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        return parts[0] + "." + Base64URL.encode(Data(claims.utf8)) + "." + parts[2]
    }

    /// The decoded payload of `token`, as JSON text.
    static func payload(of token: String) -> String {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        return String(decoding: Base64URL.decode(String(parts[1])) ?? [], as: UTF8.self)
    }
}
