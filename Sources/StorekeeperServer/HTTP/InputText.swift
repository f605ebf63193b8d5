import StorekeeperCore

/// Checks text from outside before it reaches a query: a length bound and no control characters (PostgreSQL
/// refuses NUL in text, and nothing in Storekeeper's identifiers, keys or reasons needs one), answered with a 400
/// naming the field.
enum InputText {
    /// `value` when it is 1...`maxBytes` UTF-8 bytes without control characters; otherwise a 400 `invalid_<field>`.
    @discardableResult
    static func check(_ value: String, field: String, maxBytes: Int = 200, allowEmpty: Bool = false) throws -> String {
        guard allowEmpty || !value.isEmpty, value.utf8.count <= maxBytes,
            !value.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F })
        else {
            throw StorekeeperError.invalidInput(
                "invalid_\(snakeCase(field))",
                "\(field) must be \(allowEmpty ? 0 : 1)-\(maxBytes) bytes without control characters"
            )
        }
        return value
    }

    /// The same check for an optional field.
    @discardableResult
    static func check(_ value: String?, field: String, maxBytes: Int = 200) throws -> String? {
        guard let value else { return nil }
        return try check(value, field: field, maxBytes: maxBytes, allowEmpty: false)
    }

    /// An integer query parameter within `range`; nil when absent, a 400 `invalid_<name>` when malformed or out of range.
    static func integer<T: FixedWidthInteger>(_ text: String?, name: String, in range: ClosedRange<T>) throws -> T? {
        guard let text else { return nil }
        guard let value = T(text), range.contains(value) else {
            throw StorekeeperError.invalidInput("invalid_\(name)", "\(name) must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// One of `allowed`; nil when absent, a 400 otherwise.
    static func oneOf(_ text: String?, name: String, allowed: [String]) throws -> String? {
        guard let text else { return nil }
        guard allowed.contains(text) else {
            throw StorekeeperError.invalidInput("invalid_\(name)", "\(name) must be one of \(allowed.joined(separator: ", "))")
        }
        return text
    }

    private static func snakeCase(_ field: String) -> String {
        var result = ""
        for character in field {
            if character.isUppercase { result += "_" + character.lowercased() } else { result.append(character) }
        }
        return result
    }
}
