import Crypto
import Foundation

/// The three segments of a compact JWS, as views into the caller's bytes (no copies until decoded).
struct CompactJWS {
    let header: UnsafeBufferPointer<UInt8>
    let payload: UnsafeBufferPointer<UInt8>
    let signature: UnsafeBufferPointer<UInt8>
    /// `header.payload`, the bytes the signature covers.
    let signingInput: UnsafeBufferPointer<UInt8>

    /// Splits `bytes` at its two dots, refusing anything that is not three non-empty segments.
    init(_ bytes: UnsafeBufferPointer<UInt8>, maximumSize: Int) throws(SignedDataVerificationError) {
        guard bytes.count <= maximumSize else {
            throw .malformed("signed data is \(bytes.count) bytes; the limit is \(maximumSize)")
        }
        guard !bytes.isEmpty else { throw .malformed("signed data is empty") }
        // memchr rather than a byte loop: the signing input is several kilobytes of base64.
        let base = bytes.baseAddress!
        func dot(after start: Int) -> Int {
            guard start < bytes.count, let found = memchr(base + start, Int32(UInt8(ascii: ".")), bytes.count - start)
            else { return -1 }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
        let firstDot = dot(after: 0)
        let secondDot = firstDot < 0 ? -1 : dot(after: firstDot + 1)
        if secondDot >= 0, dot(after: secondDot + 1) >= 0 {
            throw .malformed("not a compact JWS: more than three segments (JWE and JSON serialization are not accepted)")
        }
        guard secondDot >= 0 else {
            throw .malformed("not a compact JWS: expected three dot-separated segments")
        }
        guard firstDot > 0, secondDot > firstDot + 1, secondDot < bytes.count - 1 else {
            throw .malformed("not a compact JWS: empty header, payload or signature segment")
        }
        header = UnsafeBufferPointer(start: base, count: firstDot)
        payload = UnsafeBufferPointer(start: base + firstDot + 1, count: secondDot - firstDot - 1)
        signature = UnsafeBufferPointer(start: base + secondDot + 1, count: bytes.count - secondDot - 1)
        signingInput = UnsafeBufferPointer(start: base, count: secondDot)
    }

    func decodeHeader() throws(SignedDataVerificationError) -> JWSHeader {
        guard let json = Base64URL.decode(buffer: header, allowPadding: false) else {
            throw .malformed("JWS header is not base64url")
        }
        let decoded: JWSHeader
        do {
            decoded = try JSONDecoder().decode(JWSHeader.self, from: Data(json))
        } catch {
            throw .malformed("JWS header is not a JSON object with a string \"alg\": \(Self.describe(error))")
        }
        return decoded
    }

    func decodePayload<P: Decodable>() throws(SignedDataVerificationError) -> P {
        guard let json = Base64URL.decode(buffer: payload, allowPadding: false) else {
            throw .malformed("JWS payload is not base64url")
        }
        do {
            return try AppStoreJSON.decodePayload(P.self, from: json)
        } catch {
            throw .malformed("JWS payload is not a valid \(P.self): \(Self.describe(error))")
        }
    }

    /// The ES256 signature in JWS form: 64 bytes, R‖S.
    func decodeES256Signature() throws(SignedDataVerificationError) -> P256.Signing.ECDSASignature {
        guard let raw = Base64URL.decode(buffer: signature, allowPadding: false) else {
            throw .malformed("JWS signature is not base64url")
        }
        guard raw.count == 64 else {
            throw .malformed("ES256 signature must be 64 bytes (R‖S); it is \(raw.count)")
        }
        do {
            return try P256.Signing.ECDSASignature(rawRepresentation: raw)
        } catch {
            throw .malformed("ES256 signature is not a valid P-256 signature encoding")
        }
    }

    /// A short, single-line account of a decoding error (which key or value was wrong).
    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "missing \(path(context.codingPath + [key]))"
        case DecodingError.typeMismatch(let type, let context):
            return "\(path(context.codingPath)) is not \(type)"
        case DecodingError.valueNotFound(let type, let context):
            return "\(path(context.codingPath)) is null, expected \(type)"
        case DecodingError.dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not valid JSON" : "\(path(context.codingPath)) is invalid"
        default:
            return "\(error)"
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.isEmpty ? "value" : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}
