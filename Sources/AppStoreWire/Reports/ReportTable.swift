import Foundation

/// A tab-separated report with a header row (App Store Connect's sales and finance reports), read by column name:
/// Apple adds columns between versions, so positions are never assumed and unknown columns are kept and ignored.
public struct ReportTable: Sendable, Hashable {
    /// Why a report could not be read.
    public struct Failure: Error, Hashable, CustomStringConvertible {
        public let message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    public let columns: [String]
    public let rows: [[String]]
    /// Lines after the table that are not rows (a finance report's `Total_Rows`, `Total_Amount`, ...).
    public let trailer: [String]
    private let positions: [String: Int]
    /// The same, by lowercased name: Apple's column names have changed case between versions ("Pay as You Go").
    private let folded: [String: Int]

    /// Reads `text`: the first line names the columns; every following line up to the first empty one is a row with
    /// exactly as many fields. Line ends may be `\n` or `\r\n`; a UTF-8 byte order mark is skipped.
    public init(tsv text: String, maximumRows: Int = 5_000_000) throws {
        // "\r\n" is one Character in Swift, so both line ends are separators of their own.
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        if lines.last?.isEmpty == true { lines.removeLast() }
        guard var header = lines.first, !header.isEmpty else { throw Failure("the report is empty") }
        if header.first == "\u{FEFF}" { header = header.dropFirst() }
        let columns = header.split(separator: "\t", omittingEmptySubsequences: false).map {
            String($0).trimmingCharacters(in: .whitespaces)
        }
        var positions: [String: Int] = [:]
        for (index, column) in columns.enumerated() where !column.isEmpty {
            guard positions[column] == nil else { throw Failure("column \(column) appears twice") }
            positions[column] = index
        }
        var rows: [[String]] = []
        var trailer: [String] = []
        var index = 1
        while index < lines.count {
            let line = lines[index]
            if line.isEmpty {
                trailer = lines[(index + 1)...].filter { !$0.isEmpty }.map(String.init)
                break
            }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == columns.count else {
                throw Failure("line \(index + 1) has \(fields.count) fields, the header names \(columns.count)")
            }
            guard rows.count < maximumRows else { throw Failure("more than \(maximumRows) rows") }
            rows.append(fields)
            index += 1
        }
        self.columns = columns
        self.rows = rows
        self.trailer = trailer
        self.positions = positions
        var folded: [String: Int] = [:]
        for (column, index) in positions where folded[column.lowercased()] == nil { folded[column.lowercased()] = index }
        self.folded = folded
    }

    /// The position of `column`, if the report has it (the exact name first, then regardless of case).
    public func position(of column: String) -> Int? { positions[column] ?? folded[column.lowercased()] }

    /// The positions of `required` columns; throws naming the first one missing.
    public func positions(of required: [String]) throws -> [String: Int] {
        var found: [String: Int] = [:]
        for column in required {
            guard let position = position(of: column) else { throw Failure("the report has no \(column) column") }
            found[column] = position
        }
        return found
    }

    /// Writes `rows` under `columns` as Apple does: tab-separated, `\n` line ends.
    public static func tsv(columns: [String], rows: [[String]], trailer: [String] = []) -> String {
        var out = columns.joined(separator: "\t") + "\n"
        for row in rows { out += row.joined(separator: "\t") + "\n" }
        if !trailer.isEmpty { out += "\n" + trailer.joined(separator: "\n") + "\n" }
        return out
    }
}
