import Crypto
import Foundation
import Synchronization

/// The SHA-256 digests of the JWS header segments seen most recently.
///
/// Every notification repeats the same few certificate chains; recognising one by comparing bytes is an order of
/// magnitude cheaper than hashing it again. Only headers of bodies that passed verification are offered, and the
/// cache keeps a handful, replacing the oldest, so it stays small whatever arrives.
public final class HeaderDigestCache: Sendable {
    private struct Entry: Sendable {
        let bytes: [UInt8]
        let digest: String
    }

    private let entries = Mutex<[Entry]>([])
    private let capacity: Int

    public init(capacity: Int = 8) {
        self.capacity = max(1, capacity)
    }

    /// The lowercase hex SHA-256 of `header`, from the cache when these exact bytes were seen before.
    func digest(of header: UnsafeBufferPointer<UInt8>) -> String {
        let known = entries.withLock { $0 }
        for entry in known where entry.bytes.count == header.count {
            let equal = entry.bytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, header.baseAddress!, header.count) == 0 }
            if equal { return entry.digest }
        }
        let digest = Self.hex(SHA256.hash(data: UnsafeRawBufferPointer(header)))
        // Only marker-free headers are remembered, so a match in `knownHeader(at:)` also proves the bytes are free
        // of the 0x01–0x03 markers stored texts use.
        guard !WordScan.containsByte(below: 4, in: header) else { return digest }
        let entry = Entry(bytes: Array(header), digest: digest)
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeFirst() }
            entries.append(entry)
        }
        return digest
    }

    /// Whether `candidate` begins with a header already in the cache, and which: a JWS header is followed by ".".
    /// A known header contains no byte below 0x04.
    func knownHeader(at candidate: UnsafeBufferPointer<UInt8>) -> (length: Int, digest: String)? {
        let known = entries.withLock { $0 }
        for entry in known where entry.bytes.count < candidate.count && candidate[entry.bytes.count] == UInt8(ascii: ".") {
            let equal = entry.bytes.withUnsafeBufferPointer {
                memcmp($0.baseAddress!, candidate.baseAddress!, entry.bytes.count) == 0
            }
            if equal { return (entry.bytes.count, entry.digest) }
        }
        return nil
    }

    static func hex(_ digest: SHA256.Digest) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in digest {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
