import Foundation

/// Parsers for the quoted values of legacy receipts, shared by the typed accessors.
enum LegacyValue {
    static func bool(_ text: String?) -> Bool? {
        switch text?.trimmingCharacters(in: .whitespaces).lowercased() {
        case "true", "1": true
        case "false", "0": false
        default: nil
        }
    }

    static func int64(_ text: String?) -> Int64? {
        guard let text else { return nil }
        return Int64(text.trimmingCharacters(in: .whitespaces))
    }

    static func int(_ text: String?) -> Int? {
        guard let text else { return nil }
        return Int(text.trimmingCharacters(in: .whitespaces))
    }

    static func date(ms text: String?) -> Date? {
        int64(text).map { Date(timeIntervalSince1970: TimeInterval($0) / 1000) }
    }
}
