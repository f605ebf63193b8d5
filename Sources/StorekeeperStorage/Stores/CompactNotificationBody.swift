import Crypto
import Foundation

/// A V2 notification body stored without the certificate chains it repeats, restorable byte for byte.
///
/// Apple's `{"signedPayload":"H.P.S"}` is about 15 KB, and two thirds of it are three copies of the same `x5c`
/// chain: the outer JWS header and, inside the base64url payload, the headers of the transaction and renewal JWS.
/// Stored as is, every notification writes those bytes through the write-ahead log and the table again. Here each
/// header is replaced by a reference to a row of `notification_headers` (keyed by its SHA-256), and the outer
/// payload is kept decoded so that the inner headers can be referenced too:
///
///     prefix  0x01<sha256 of H>  "."  0x02 <payload JSON with 0x01<sha256> for inner headers> 0x03  "." S  suffix
///
/// 0x01–0x03 never occur in JSON text (control characters must be escaped there), so the markers are unambiguous.
/// A body is compacted only when it restores exactly: the payload must be canonical base64url (re-encoding it gives
/// the same characters) and contain no marker bytes; anything else (V1 bodies, other layouts) is stored raw.
public struct CompactNotificationBody: Sendable, Hashable {
    /// The `body_format` of a compacted row (`NULL` is a raw body).
    public static let format = "jws-shared-headers-1"

    /// The stored text.
    public var text: String
    /// Every header `text` refers to: SHA-256 (lowercase hex) → the base64url header segment.
    public var headers: [String: String]

    private static let reference: UInt8 = 0x01
    private static let encodedStart: UInt8 = 0x02
    private static let encodedEnd: UInt8 = 0x03
    private static let signedPayloadKey = Array(#""signedPayload":""#.utf8)
    /// Shorter header segments are left in place: a reference costs 65 bytes.
    private static let minimumHeaderLength = 200

    /// Compacts `body`, or `nil` when it is not a body this format restores exactly.
    public init?(body: String) {
        var body = body
        guard let compacted = body.withUTF8({ Self.compact($0) }) else { return nil }
        (text, headers) = compacted
    }

    // Runs on every webhook call, so it works on raw buffers: one pass to find the JWS, one base64url decode, one
    // pass over the payload.
    private static func compact(_ bytes: UnsafeBufferPointer<UInt8>) -> (String, [String: String])? {
        let quote = UInt8(ascii: "\""), dot = UInt8(ascii: ".")
        guard !bytes.contains(where: { $0 <= encodedEnd }), let keyStart = find(signedPayloadKey, in: bytes) else { return nil }
        let jwsStart = keyStart + signedPayloadKey.count
        guard let jwsEnd = bytes[jwsStart...].firstIndex(of: quote),
            let firstDot = bytes[jwsStart..<jwsEnd].firstIndex(of: dot),
            let secondDot = bytes[(firstDot + 1)..<jwsEnd].firstIndex(of: dot),
            !bytes[(secondDot + 1)..<jwsEnd].contains(dot),
            let payload = Base64URL.decodeCanonical(UnsafeBufferPointer(rebasing: bytes[(firstDot + 1)..<secondDot])),
            !payload.contains(where: { $0 <= encodedEnd }),
            String(validating: payload, as: UTF8.self) != nil
        else { return nil }

        var headers: [String: String] = [:]
        var out: [UInt8] = []
        out.reserveCapacity(payload.count + 512)
        func appendReference(_ header: UnsafeBufferPointer<UInt8>) {
            let digest = hex(SHA256.hash(data: header))
            if headers[digest] == nil { headers[digest] = String(decoding: header, as: UTF8.self) }
            out.append(reference)
            out.append(contentsOf: digest.utf8)
        }
        out.append(contentsOf: bytes[..<jwsStart])
        appendReference(UnsafeBufferPointer(rebasing: bytes[jwsStart..<firstDot]))
        out.append(dot)
        out.append(encodedStart)
        payload.withUnsafeBufferPointer { payload in
            // Inner JWS: a JSON string that starts with a base64url JSON object ("eyJ") and runs, in base64url
            // characters, to a ".".
            var copied = 0
            var index = 0
            while let found = payload[index...].firstIndex(of: quote) {
                index = found + 1
                guard found + 3 < payload.count, payload[found + 1] == UInt8(ascii: "e"), payload[found + 2] == UInt8(ascii: "y"),
                    payload[found + 3] == UInt8(ascii: "J")
                else { continue }
                var end = found + 1
                while end < payload.count, Base64URL.isAlphabet(payload[end]) { end += 1 }
                guard end < payload.count, payload[end] == dot, end - found - 1 >= minimumHeaderLength else { continue }
                out.append(contentsOf: payload[copied...found])
                appendReference(UnsafeBufferPointer(rebasing: payload[(found + 1)..<end]))
                copied = end
                index = end
            }
            out.append(contentsOf: payload[copied...])
        }
        out.append(encodedEnd)
        out.append(contentsOf: bytes[secondDot...])
        return (String(decoding: out, as: UTF8.self), headers)
    }

    /// The header digests `text` refers to.
    public static func references(in text: String) -> Set<String> {
        let bytes = Array(text.utf8)
        var digests = Set<String>()
        var index = 0
        while let marker = bytes[index...].firstIndex(of: reference) {
            guard marker + 65 <= bytes.count else { break }
            digests.insert(String(decoding: bytes[(marker + 1)...(marker + 64)], as: UTF8.self))
            index = marker + 65
        }
        return digests
    }

    /// The original body of a compacted `text`.
    public static func expand(_ text: String, headers: [String: String]) throws -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 4)
        var encoded: [UInt8]?
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case reference:
                guard index + 65 <= bytes.count else { throw Malformed(reason: "a header reference is cut short") }
                let digest = String(decoding: bytes[(index + 1)...(index + 64)], as: UTF8.self)
                guard let header = headers[digest] else { throw Malformed(reason: "header \(digest) is not stored") }
                if encoded != nil { encoded!.append(contentsOf: header.utf8) } else { out.append(contentsOf: header.utf8) }
                index += 65
                continue
            case encodedStart:
                guard encoded == nil else { throw Malformed(reason: "nested payload markers") }
                encoded = []
            case encodedEnd:
                guard let payload = encoded else { throw Malformed(reason: "a payload end without a start") }
                out.append(contentsOf: Base64URL.encode(payload))
                encoded = nil
            default:
                if encoded != nil { encoded!.append(byte) } else { out.append(byte) }
            }
            index += 1
        }
        guard encoded == nil else { throw Malformed(reason: "an unterminated payload") }
        return String(decoding: out, as: UTF8.self)
    }

    /// A stored compact body that cannot be expanded.
    public struct Malformed: Error, CustomStringConvertible {
        public var reason: String
        public var description: String { "stored notification body: \(reason)" }
    }

    private static func hex(_ digest: SHA256.Digest) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in digest {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func find(_ needle: [UInt8], in haystack: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let first = needle.first, needle.count <= haystack.count else { return nil }
        var index = 0
        while let found = haystack[index...].firstIndex(of: first) {
            guard found + needle.count <= haystack.count else { return nil }
            if haystack[found..<(found + needle.count)].elementsEqual(needle) { return found }
            index = found + 1
        }
        return nil
    }
}

/// Unpadded base64url (RFC 4648 §5), as JWS uses it.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()

    @inline(__always)
    static func isAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    static func encode(_ bytes: [UInt8]) -> [UInt8] {
        alphabet.withUnsafeBufferPointer { alphabet in
            bytes.withUnsafeBufferPointer { bytes in
                [UInt8](unsafeUninitializedCapacity: (bytes.count * 4 + 2) / 3) { out, count in
                    var index = 0
                    var written = 0
                    while index + 3 <= bytes.count {
                        let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                        out[written] = alphabet[Int(chunk >> 18 & 63)]
                        out[written + 1] = alphabet[Int(chunk >> 12 & 63)]
                        out[written + 2] = alphabet[Int(chunk >> 6 & 63)]
                        out[written + 3] = alphabet[Int(chunk & 63)]
                        index += 3
                        written += 4
                    }
                    let rest = bytes.count - index
                    if rest > 0 {
                        let chunk = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
                        out[written] = alphabet[Int(chunk >> 18 & 63)]
                        out[written + 1] = alphabet[Int(chunk >> 12 & 63)]
                        written += 2
                        if rest == 2 {
                            out[written] = alphabet[Int(chunk >> 6 & 63)]
                            written += 1
                        }
                    }
                    count = written
                }
            }
        }
    }

    /// `nil` for characters outside the alphabet, an impossible length, or unused low bits that are not zero (so
    /// that encoding the result gives back exactly `text`).
    static func decodeCanonical(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let remainder = text.count % 4
        guard remainder != 1 else { return nil }
        return values.withUnsafeBufferPointer { values -> [UInt8]? in
            var failed = false
            let decoded = [UInt8](unsafeUninitializedCapacity: text.count * 3 / 4 + 3) { out, count in
                var accumulator: UInt32 = 0
                var bits = 0
                var written = 0
                for character in text {
                    let value = values[Int(character)]
                    if value == 0xFF { failed = true; break }
                    accumulator = accumulator << 6 | UInt32(value)
                    bits += 6
                    if bits >= 8 {
                        bits -= 8
                        out[written] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                        written += 1
                    }
                }
                if bits > 0, accumulator & ((1 << UInt32(bits)) - 1) != 0 { failed = true }
                count = written
            }
            return failed ? nil : decoded
        }
    }
}

