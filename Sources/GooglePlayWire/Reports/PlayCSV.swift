import Foundation

/// RFC 4180 CSV as Google Play's financial reports write it: comma-separated, fields with commas, quotes or line
/// breaks quoted, quotes doubled; UTF-8 (a byte-order mark is dropped) or UTF-16 with its mark.
public enum PlayCSV {
    /// Why a CSV file could not be read.
    public enum Failure: Error, Hashable, CustomStringConvertible {
        case malformed(String)

        public var description: String {
            switch self {
            case .malformed(let why): "not a readable CSV file: \(why)"
            }
        }
    }

    /// The records of `bytes`, each a list of fields; blank lines are skipped.
    public static func records(_ bytes: [UInt8]) throws(Failure) -> [[String]] {
        let text: String
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            text = try utf16(bytes)
        } else {
            let body = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
            guard let decoded = String(validating: body, as: UTF8.self) else { throw .malformed("not UTF-8") }
            text = decoded
        }
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var quoted = false
        var afterQuote = false
        var iterator = text.unicodeScalars.makeIterator()
        func endRecord() {
            record.append(field)
            if !(record.count == 1 && record[0].isEmpty) { records.append(record) }
            record = []
            field = ""
        }
        while let scalar = iterator.next() {
            if quoted {
                if scalar == "\"" {
                    quoted = false
                    afterQuote = true
                } else {
                    field.unicodeScalars.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"":
                if afterQuote {
                    // A doubled quote inside a quoted field.
                    field.unicodeScalars.append(scalar)
                    quoted = true
                    afterQuote = false
                } else if field.isEmpty {
                    quoted = true
                } else {
                    throw .malformed("a quote inside an unquoted field (record \(records.count + 1))")
                }
            case ",":
                record.append(field)
                field = ""
                afterQuote = false
            case "\r":
                continue
            case "\n":
                endRecord()
                afterQuote = false
            default:
                if afterQuote { throw .malformed("text after a closing quote (record \(records.count + 1))") }
                field.unicodeScalars.append(scalar)
            }
        }
        if quoted { throw .malformed("a quoted field is not closed") }
        if !field.isEmpty || !record.isEmpty { endRecord() }
        return records
    }

    /// One record, quoted where it needs to be, ending in CRLF as Google's files do.
    public static func line(_ fields: [String]) -> String {
        fields.map { field in
            field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
                ? "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : field
        }.joined(separator: ",") + "\r\n"
    }

    private static func utf16(_ bytes: [UInt8]) throws(Failure) -> String {
        guard bytes.count % 2 == 0 else { throw .malformed("odd UTF-16 length") }
        let littleEndian = bytes[0] == 0xFF
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2 - 1)
        var index = 2
        while index < bytes.count {
            let (a, b) = (UInt16(bytes[index]), UInt16(bytes[index + 1]))
            units.append(littleEndian ? a | b << 8 : a << 8 | b)
            index += 2
        }
        guard let text = String(validating: units, as: UTF16.self) else { throw .malformed("not UTF-16") }
        return text
    }
}
