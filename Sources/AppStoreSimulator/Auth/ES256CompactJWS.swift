import AppStoreWire
import Crypto
import Foundation

/// A compact JWS signed with an In-App Purchase key (ES256, `kid` header), read by AppStoreWire's ``SignedToken``
/// but not yet trusted: callers look up the key by ``keyId`` and check ``isSigned(by:)`` before reading the payload.
struct ES256CompactJWS {
    /// What is wrong with the token's shape, before any key is consulted.
    enum Problem: Error, Hashable {
        case malformed(String)
        case unsupportedAlgorithm(String)
        case missingKeyId
    }

    let token: SignedToken
    var header: SignedToken.Header { token.header }
    /// The validated, non-empty `kid`.
    let keyId: String

    init(_ text: String) throws(Problem) {
        do {
            token = try SignedToken(text)
        } catch {
            throw .malformed(error.description)
        }
        // The algorithm before the signature segment, so that `alg: none` (empty signature) is reported as the
        // algorithm problem it is, not as a missing signature.
        guard token.header.alg == "ES256" else { throw .unsupportedAlgorithm(token.header.alg) }
        guard let kid = token.header.kid, !kid.isEmpty else { throw .missingKeyId }
        guard !token.signature.isEmpty else { throw .malformed("JWS has no signature") }
        guard token.signature.count == 64 else { throw .malformed("ES256 signature must be 64 bytes (R‖S); it is \(token.signature.count)") }
        keyId = kid
    }

    func isSigned(by key: P256.Signing.PublicKey) -> Bool { token.isSigned(by: key) }

    /// Decodes the claims; a missing claim decodes as `nil` (callers name it), a mistyped one is malformed.
    func decodeClaims<Claims: Decodable>(_ type: Claims.Type) throws(Problem) -> Claims {
        do {
            return try token.claims(type)
        } catch {
            throw .malformed(error.description)
        }
    }
}
