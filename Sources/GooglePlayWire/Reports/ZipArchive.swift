import CZlib

/// The ZIP files Google Play's financial reports come in (one CSV each): entries stored or deflated, read through
/// the central directory, each checked against its CRC-32 and inflated no further than a limit; and written
/// deflated (the simulator's reports).
public enum ZipArchive {
    /// One file in an archive.
    public struct Entry: Sendable, Hashable {
        public var name: String
        public var bytes: [UInt8]

        public init(name: String, bytes: [UInt8]) {
            self.name = name
            self.bytes = bytes
        }
    }

    /// Why an archive could not be read.
    public enum Failure: Error, Hashable, CustomStringConvertible {
        case malformed(String)
        /// Its entries inflate past the limit the caller set (a zip bomb, or a report far larger than expected).
        case tooLarge(limit: Int)

        public var description: String {
            switch self {
            case .malformed(let why): "not a readable ZIP archive: \(why)"
            case .tooLarge(let limit): "inflates past \(limit) bytes"
            }
        }
    }

    /// Every file in `archive` (directories left out), together at most `limit` bytes inflated.
    public static func entries(_ archive: [UInt8], limit: Int) throws(Failure) -> [Entry] {
        // The end-of-central-directory record is in the last 22 + 65,535 bytes (its comment is at most that long).
        guard archive.count >= 22 else { throw .malformed("too short") }
        var end = -1
        var position = archive.count - 22
        let lowest = max(0, archive.count - 22 - 65_535)
        while position >= lowest {
            if read32(archive, position) == 0x0605_4B50 {
                end = position
                break
            }
            position -= 1
        }
        guard end >= 0 else { throw .malformed("no end of central directory") }
        let count = Int(read16(archive, end + 10))
        var offset = Int(read32(archive, end + 16))
        var entries: [Entry] = []
        var total = 0
        for _ in 0..<count {
            guard offset + 46 <= archive.count, read32(archive, offset) == 0x0201_4B50 else {
                throw .malformed("a central directory entry is cut short")
            }
            let flags = read16(archive, offset + 8)
            let method = read16(archive, offset + 10)
            let crc = read32(archive, offset + 16)
            let compressed = Int(read32(archive, offset + 20))
            let size = Int(read32(archive, offset + 24))
            let nameLength = Int(read16(archive, offset + 28))
            let extraLength = Int(read16(archive, offset + 30))
            let commentLength = Int(read16(archive, offset + 32))
            let local = Int(read32(archive, offset + 42))
            guard offset + 46 + nameLength <= archive.count else { throw .malformed("a name is cut short") }
            let name = String(decoding: archive[(offset + 46)..<(offset + 46 + nameLength)], as: UTF8.self)
            offset += 46 + nameLength + extraLength + commentLength
            if name.hasSuffix("/") { continue }
            guard flags & 0x1 == 0 else { throw .malformed("\(name) is encrypted") }
            guard compressed != 0xFFFF_FFFF, size != 0xFFFF_FFFF else { throw .malformed("\(name) needs ZIP64") }
            guard size <= limit - total else { throw .tooLarge(limit: limit) }
            guard local + 30 <= archive.count, read32(archive, local) == 0x0403_4B50 else {
                throw .malformed("\(name)'s local header is missing")
            }
            let start = local + 30 + Int(read16(archive, local + 26)) + Int(read16(archive, local + 28))
            guard start <= archive.count, compressed <= archive.count - start else { throw .malformed("\(name) is cut short") }
            let stored = Array(archive[start..<(start + compressed)])
            let bytes: [UInt8]
            switch method {
            case 0: bytes = stored
            case 8: bytes = try inflateRaw(stored, size: size)
            default: throw .malformed("\(name) uses compression method \(method)")
            }
            guard bytes.count == size else { throw .malformed("\(name) inflates to \(bytes.count) bytes, not \(size)") }
            guard checksum(bytes) == crc else { throw .malformed("\(name) fails its CRC-32") }
            total += size
            entries.append(Entry(name: name, bytes: bytes))
        }
        return entries
    }

    /// An archive of `entries`, each deflated.
    public static func archive(_ entries: [Entry]) -> [UInt8] {
        var output: [UInt8] = []
        var directory: [UInt8] = []
        for entry in entries {
            let name = Array(entry.name.utf8)
            let data = deflateRaw(entry.bytes)
            let crc = checksum(entry.bytes)
            let local = UInt32(output.count)
            // Version 2.0, no flags, deflate, a fixed DOS time (1 Jan 2026, so archives are reproducible).
            let common: [UInt8] =
                bytes16(20) + bytes16(0) + bytes16(8) + bytes16(0) + bytes16(0x5C21) + bytes32(crc) + bytes32(UInt32(data.count))
                + bytes32(UInt32(entry.bytes.count)) + bytes16(UInt16(name.count)) + bytes16(0)
            output += bytes32(0x0403_4B50) + common + name + data
            directory += bytes32(0x0201_4B50) + bytes16(20) + common + bytes16(0) + bytes16(0) + bytes16(0) + bytes32(0) + bytes32(local) + name
        }
        let start = UInt32(output.count)
        output += directory
        output +=
            bytes32(0x0605_4B50) + bytes16(0) + bytes16(0) + bytes16(UInt16(entries.count)) + bytes16(UInt16(entries.count))
            + bytes32(UInt32(directory.count)) + bytes32(start) + bytes16(0)
        return output
    }

    // MARK: zlib

    private static func inflateRaw(_ data: [UInt8], size: Int) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        // Negative window bits: raw deflate, as ZIP stores it.
        guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .malformed("zlib refused to start")
        }
        defer { inflateEnd(&stream) }
        // One byte more than promised, so an entry that inflates past its size is caught rather than cut.
        var output = [UInt8](repeating: 0, count: size + 1)
        var input = data
        let (status, produced) = input.withUnsafeMutableBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                stream.next_in = inputBuffer.baseAddress
                stream.avail_in = UInt32(inputBuffer.count)
                stream.next_out = out.baseAddress
                stream.avail_out = UInt32(out.count)
                let status = inflate(&stream, Z_FINISH)
                return (status, out.count - Int(stream.avail_out))
            }
        }
        guard status == Z_STREAM_END else { throw .malformed(produced > size ? "an entry inflates past its size" : "corrupt deflate data") }
        return Array(output[0..<produced])
    }

    private static func deflateRaw(_ data: [UInt8]) -> [UInt8] {
        var stream = z_stream()
        guard deflateInit2_(&stream, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { preconditionFailure("zlib refused its own defaults") }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(data.count))))
        var input = data
        let produced = input.withUnsafeMutableBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { out -> Int in
                stream.next_in = inputBuffer.baseAddress
                stream.avail_in = UInt32(inputBuffer.count)
                stream.next_out = out.baseAddress
                stream.avail_out = UInt32(out.count)
                _ = deflate(&stream, Z_FINISH)
                return out.count - Int(stream.avail_out)
            }
        }
        return Array(output[0..<produced])
    }

    private static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, UInt32($0.count))) }
    }

    private static func read16(_ bytes: [UInt8], _ at: Int) -> UInt16 {
        guard at >= 0, at + 2 <= bytes.count else { return 0 }
        return UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
    }

    private static func read32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        guard at >= 0, at + 4 <= bytes.count else { return 0 }
        return UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    private static func bytes16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    private static func bytes32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
}
