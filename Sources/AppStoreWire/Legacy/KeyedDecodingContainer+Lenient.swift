import Foundation

// Legacy receipt JSON is "all strings" by Apple's documentation, but several fields arrive as JSON numbers
// (adam_id, app_item_id, download_id, status, V1 expiration_intent ...) and Apple has been inconsistent
// across environments and years. These helpers accept either form so one odd field never rejects a
// whole receipt.
extension KeyedDecodingContainer {
    /// A string, or a number / Boolean rendered as Apple would have quoted it.
    func decodeLegacyString(_ key: Key) throws -> String? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let value = try? decode(String.self, forKey: key) { return value }
        if let value = try? decode(Int64.self, forKey: key) { return String(value) }
        if let value = try? decode(UInt64.self, forKey: key) { return String(value) }
        if let value = try? decode(Bool.self, forKey: key) { return value ? "true" : "false" }
        if let value = try? decode(Double.self, forKey: key) { return String(value) }
        throw DecodingError.typeMismatch(
            String.self,
            .init(codingPath: codingPath + [key], debugDescription: "Expected a string or a number")
        )
    }

    /// An integer sent either as a JSON number or as a decimal string.
    func decodeLegacyInt64(_ key: Key) throws -> Int64? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let value = try? decode(Int64.self, forKey: key) { return value }
        if let text = try? decode(String.self, forKey: key) {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            // An empty string is how Apple occasionally says "absent".
            if trimmed.isEmpty { return nil }
            if let value = Int64(trimmed) { return value }
        }
        if let value = try? decode(Double.self, forKey: key), value.rounded() == value,
            let exact = Int64(exactly: value)
        {
            return exact
        }
        throw DecodingError.typeMismatch(
            Int64.self,
            .init(codingPath: codingPath + [key], debugDescription: "Expected an integer or an integer string")
        )
    }

    /// A Boolean sent as `true`/`false`, `1`/`0`, or either of those quoted.
    func decodeLegacyBool(_ key: Key) throws -> Bool? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let value = try? decode(Bool.self, forKey: key) { return value }
        if let value = try? decode(Int64.self, forKey: key) { return value != 0 }
        if let text = try? decode(String.self, forKey: key), let value = LegacyValue.bool(text) { return value }
        throw DecodingError.typeMismatch(
            Bool.self,
            .init(codingPath: codingPath + [key], debugDescription: "Expected a Boolean, 0/1 or a quoted Boolean")
        )
    }
}
