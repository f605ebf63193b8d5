import AppStoreWire
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
    ///
    /// - Parameter digests: remembers header digests across calls (the same chains arrive with every notification);
    ///   offer it only bodies whose signature was verified.
    public init?(body: String, digests: HeaderDigestCache? = nil) {
        var body = body
        let digests = digests ?? HeaderDigestCache(capacity: 4)
        guard let compacted = body.withUTF8({ Self.compact($0, digests: digests) }) else { return nil }
        (text, headers) = compacted
    }

    // Runs on every webhook call, so it works on raw buffers, finds bytes with memchr, checks a word at a time,
    // and recognises repeated headers by comparing them with known ones instead of scanning and hashing them.
    private static func compact(_ bytes: UnsafeBufferPointer<UInt8>, digests: HeaderDigestCache) -> (String, [String: String])? {
        let quote = UInt8(ascii: "\"")
        let dot = UInt8(ascii: ".")
        let markers = encodedEnd + 1
        guard let keyStart = find(signedPayloadKey, in: bytes) else { return nil }
        let jwsStart = keyStart + signedPayloadKey.count
        // Every byte is checked for markers once: the prefix, signature and suffix by scanning, the payload text
        // by decoding it (only base64url characters decode), the header by scanning or by matching a known one.
        guard let jwsEnd = WordScan.index(of: quote, in: bytes, from: jwsStart),
            let firstDot = WordScan.index(of: dot, in: bytes, from: jwsStart, to: jwsEnd),
            let secondDot = WordScan.index(of: dot, in: bytes, from: firstDot + 1, to: jwsEnd),
            WordScan.index(of: dot, in: bytes, from: secondDot + 1, to: jwsEnd) == nil,
            !WordScan.containsByte(below: markers, in: UnsafeBufferPointer(rebasing: bytes[..<jwsStart])),
            !WordScan.containsByte(below: markers, in: UnsafeBufferPointer(rebasing: bytes[secondDot...])),
            let payload = Base64URL.decode(unpadded: UnsafeBufferPointer(rebasing: bytes[(firstDot + 1)..<secondDot]))
        else { return nil }
        let scan = payload.withUnsafeBufferPointer { WordScan.scan($0, markersBelow: markers) }
        guard !scan.hasMarker, scan.isASCII || String(validating: payload, as: UTF8.self) != nil else { return nil }
        let outer = UnsafeBufferPointer(rebasing: bytes[jwsStart..<firstDot])
        let outerDigest: String
        if let known = digests.knownHeader(at: UnsafeBufferPointer(rebasing: bytes[jwsStart...])), known.length == outer.count {
            outerDigest = known.digest
        } else {
            guard !WordScan.containsByte(below: markers, in: outer) else { return nil }
            outerDigest = digests.digest(of: outer)
        }

        var headers: [String: String] = [:]
        var out: [UInt8] = []
        out.reserveCapacity(payload.count + 512)
        func appendReference(_ header: UnsafeBufferPointer<UInt8>, digest: String) {
            if headers[digest] == nil { headers[digest] = String(decoding: header, as: UTF8.self) }
            out.append(reference)
            out.append(contentsOf: digest.utf8)
        }
        out.append(contentsOf: bytes[..<jwsStart])
        appendReference(outer, digest: outerDigest)
        out.append(dot)
        out.append(encodedStart)
        payload.withUnsafeBufferPointer { payload in
            // Inner JWS: a JSON string that starts with a base64url JSON object ("eyJ") and runs, in base64url
            // characters, to a ".".
            var copied = 0
            var index = 0
            while let found = WordScan.index(of: quote, in: payload, from: index) {
                index = found + 1
                guard found + 3 < payload.count, payload[found + 1] == UInt8(ascii: "e"), payload[found + 2] == UInt8(ascii: "y"),
                    payload[found + 3] == UInt8(ascii: "J")
                else { continue }
                let start = found + 1
                let header: UnsafeBufferPointer<UInt8>
                let digest: String
                if let known = digests.knownHeader(at: UnsafeBufferPointer(rebasing: payload[start...])) {
                    header = UnsafeBufferPointer(rebasing: payload[start..<(start + known.length)])
                    digest = known.digest
                } else {
                    var end = start
                    while end < payload.count, Base64URL.isAlphabet(payload[end]) { end += 1 }
                    guard end < payload.count, payload[end] == dot, end - start >= minimumHeaderLength else { continue }
                    header = UnsafeBufferPointer(rebasing: payload[start..<end])
                    digest = digests.digest(of: header)
                }
                out.append(contentsOf: payload[copied...found])
                appendReference(header, digest: digest)
                copied = start + header.count
                index = copied
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
                out.append(contentsOf: Base64URL.encodedBytes(payload))
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

/// Byte searches over raw buffers: memchr, and checks eight bytes at a time.
enum WordScan {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The first index of `byte` in `bytes[from..<to]`.
    static func index(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from: Int, to: Int? = nil) -> Int? {
        let end = to ?? bytes.count
        guard from < end, let base = bytes.baseAddress, let found = memchr(base + from, Int32(byte), end - from) else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    /// Whether any byte is below `limit` (at most 128).
    static func containsByte(below limit: UInt8, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let raw = UnsafeRawBufferPointer(bytes)
        let subtrahend = ones &* UInt64(limit)
        var index = 0
        // A word has a byte below `limit` exactly when subtracting `limit` from every byte borrows into a high bit
        // that was clear.
        while index + 8 <= raw.count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if (word &- subtrahend) & ~word & highBits != 0 { return true }
            index += 8
        }
        while index < raw.count {
            if raw[index] < limit { return true }
            index += 1
        }
        return false
    }

    /// In one pass: whether any byte is below `limit` (at most 128), and whether every byte is ASCII (then the
    /// bytes are valid UTF-8).
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>, markersBelow limit: UInt8) -> (hasMarker: Bool, isASCII: Bool) {
        let raw = UnsafeRawBufferPointer(bytes)
        let subtrahend = ones &* UInt64(limit)
        var index = 0
        var below: UInt64 = 0
        var seen: UInt64 = 0
        while index + 8 <= raw.count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            below |= (word &- subtrahend) & ~word
            seen |= word
            index += 8
        }
        var hasMarker = below & highBits != 0
        while index < raw.count {
            hasMarker = hasMarker || raw[index] < limit
            seen |= UInt64(raw[index])
            index += 1
        }
        return (hasMarker, seen & highBits == 0)
    }
}
