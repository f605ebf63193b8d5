import Foundation

/// Reads a command's input from a file path or `-` (standard input), trimmed of surrounding white space.
enum InputReader {
    static func read(_ path: String, limit: Int = 16 * 1024 * 1024) throws -> String {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw CommandFailure("cannot read \(path)")
            }
            data = contents
        }
        guard data.count <= limit else { throw CommandFailure("input is \(data.count) bytes; the limit is \(limit)") }
        guard let text = String(data: data, encoding: .utf8) else { throw CommandFailure("input is not UTF-8 text") }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A failure reported to the user on standard error with a non-zero exit.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
