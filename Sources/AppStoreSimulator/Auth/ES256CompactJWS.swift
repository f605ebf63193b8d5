import AppStoreWire
import Crypto
import Foundation

/// A compact JWS signed with an In-App Purchase key (ES256, `kid` header), split and decoded but not yet
/// trusted: callers look up the key by ``keyId`` and check ``isSigned(by:)`` before reading the payload.
struct ES256CompactJWS {
    /// What is wrong with the token's shape, before any key is consulted.
    enum Problem: Error, Hashable {
        case malformed(String)
        case unsupportedAlgorithm(String)
        case missingKeyId
    }

    struct Header: Decodable {
        var alg: String?
        var kid: String?
        var typ: String?
        var crit: [String]?
    }

    /// Tokens are a few hundred bytes; the limit stops a hostile request from making us decode megabytes.
    static let maximumLength = 16_384

    let header: Header
    /// The validated, non-empty `kid`.
    let keyId: String
    let payload: Data
    let signature: P256.Signing.ECDSASignature
    /// `header.payload`, the bytes the signature covers.
    let signingInput: Data

    init(_ token: String) throws(Problem) {
        guard token.utf8.count <= Self.maximumLength else {
            throw .malformed("token is longer than \(Self.maximumLength) bytes")
        }
        let parts = token.split(separator: ".", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw .malformed("not a compact JWS: expected three dot-separated segments")
        }
        guard !parts[0].isEmpty, !parts[1].isEmpty else {
            throw .malformed("not a compact JWS: empty header or payload segment")
        }
        let headerJSON = try Self.decodeSegment(parts[0], name: "header")
        let header: Header
        do {
            header = try JSONDecoder().decode(Header.self, from: headerJSON)
        } catch {
            throw .malformed("JWS header is not a JSON object with string members")
        }
        // The header is checked before the signature segment so that `alg: none` (empty signature) is reported
        // as the algorithm problem it is, not as a missing signature.
        guard let alg = header.alg else { throw .malformed("JWS header has no alg") }
        guard alg == "ES256" else { throw .unsupportedAlgorithm(alg) }
        // RFC 7515 §4.1.11: an extension we do not understand that the signer marked critical must be refused.
        if header.crit != nil { throw .malformed("JWS header lists critical extensions, none are supported") }
        guard let kid = header.kid, !kid.isEmpty else { throw .missingKeyId }
        let payload = try Self.decodeSegment(parts[1], name: "payload")
        guard !parts[2].isEmpty else { throw .malformed("JWS has no signature") }
        let raw = try Self.decodeSegment(parts[2], name: "signature")
        // JWS ES256 is the fixed 64-byte R‖S, never DER (RFC 7518 §3.4).
        guard raw.count == 64, let signature = try? P256.Signing.ECDSASignature(rawRepresentation: raw) else {
            throw .malformed("ES256 signature must be 64 bytes (R‖S); it is \(raw.count)")
        }
        self.header = header
        self.keyId = kid
        self.payload = payload
        self.signature = signature
        self.signingInput = Data(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
    }

    func isSigned(by key: P256.Signing.PublicKey) -> Bool {
        key.isValidSignature(signature, for: signingInput)
    }

    /// Decodes the claims; a missing claim decodes as `nil` (callers name it), a mistyped one is malformed.
    func decodeClaims<Claims: Decodable>(_ type: Claims.Type) throws(Problem) -> Claims {
        do {
            return try JSONDecoder().decode(type, from: payload)
        } catch DecodingError.typeMismatch(_, let context) where !context.codingPath.isEmpty {
            throw .malformed("claim \(context.codingPath[0].stringValue) has the wrong type")
        } catch {
            throw .malformed("JWS payload is not a JSON object")
        }
    }

    private static func decodeSegment(_ segment: Substring, name: String) throws(Problem) -> Data {
        // Unpadded only: RFC 7515 segments never carry "=", and a second spelling of one token must not verify.
        guard !segment.contains("="), let bytes = Base64URL.decode(String(segment)) else {
            throw .malformed("JWS \(name) is not base64url")
        }
        return Data(bytes)
    }
}
