import CZlib

/// gzip (RFC 1952) through zlib: App Store Connect sends its reports as gzip files, and the simulator writes them.
public enum Gzip {
    /// Why a gzip file could not be read.
    public enum Failure: Error, Hashable, CustomStringConvertible {
        /// Not gzip, corrupt, or cut short.
        case malformed(String)
        /// It inflates past the limit the caller set (a zip bomb, or a report far larger than expected).
        case tooLarge(limit: Int)

        public var description: String {
            switch self {
            case .malformed(let why): "not a complete gzip file: \(why)"
            case .tooLarge(let limit): "inflates past \(limit) bytes"
            }
        }
    }

    // windowBits 15 + 16: a gzip wrapper, not zlib's own.
    private static let gzipWindowBits: Int32 = 15 + 16

    /// Inflates `data` (one or more gzip members), refusing output past `limit` bytes.
    public static func decompress(_ data: [UInt8], limit: Int) throws -> [UInt8] {
        guard !data.isEmpty else { throw Failure.malformed("empty") }
        guard data.count < Int(UInt32.max) else { throw Failure.tooLarge(limit: Int(UInt32.max)) }
        var stream = z_stream()
        guard inflateInit2_(&stream, gzipWindowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw Failure.malformed("zlib refused to start")
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var input = data
        return try input.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = UInt32(inputBuffer.count)
            while true {
                let status = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                guard output.count + produced <= limit else { throw Failure.tooLarge(limit: limit) }
                output.append(contentsOf: chunk[0..<produced])
                switch status {
                case Z_STREAM_END:
                    // Another member may follow (concatenated gzip files are one file).
                    if stream.avail_in == 0 { return output }
                    guard inflateReset(&stream) == Z_OK else { throw Failure.malformed("cannot read the next member") }
                case Z_OK:
                    if stream.avail_in == 0 && produced == 0 { throw Failure.malformed("cut short") }
                case Z_BUF_ERROR:
                    if stream.avail_in == 0 { throw Failure.malformed("cut short") }
                default:
                    throw Failure.malformed(stream.msg.map { String(cString: $0) } ?? "zlib status \(status)")
                }
            }
        }
    }

    /// Deflates `data` into one gzip member.
    public static func compress(_ data: [UInt8], level: Int32 = 6) -> [UInt8] {
        var stream = z_stream()
        guard
            deflateInit2_(&stream, level, Z_DEFLATED, gzipWindowBits, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { preconditionFailure("zlib refused its own defaults") }
        defer { deflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var input = data
        input.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = UInt32(inputBuffer.count)
            var status = Z_OK
            while status != Z_STREAM_END {
                status = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    return deflate(&stream, Z_FINISH)
                }
                output.append(contentsOf: chunk[0..<(chunk.count - Int(stream.avail_out))])
            }
        }
        return output
    }
}
