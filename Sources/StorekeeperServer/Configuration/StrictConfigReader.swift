import Configuration
import Foundation

/// Reads configuration so that a value of the wrong type stops the start with a message naming the key, instead of
/// being ignored for the default (swift-configuration's optional getters drop a value they cannot convert). Lists
/// are accepted as arrays or as one comma-separated string, the form README shows for both the environment and a
/// JSON file; numbers are bounded.
struct StrictConfigReader {
    let reader: ConfigReader
    /// The dotted prefix of this scope, for messages (`apps.main`).
    let scope: String

    init(_ reader: ConfigReader, scope: String = "") {
        self.reader = reader
        self.scope = scope
    }

    func scoped(to key: String) -> StrictConfigReader {
        StrictConfigReader(reader.scoped(to: ConfigKey(key)), scope: name(key))
    }

    private func name(_ key: String) -> String { scope.isEmpty ? key : "\(scope).\(key)" }

    /// Runs one typed read; a missing key is nil, anything else that fails names the key.
    private func read<T>(_ key: String, type: String, _ body: () throws -> T) throws -> T? {
        do {
            return try body()
        } catch {
            // swift-configuration reports a missing required value with this description (its error type is not
            // public); every other failure is a value that is there but unusable.
            if "\(error)".hasPrefix("Missing required config value") { return nil }
            throw ConfigurationError.invalid("\(name(key)) must be \(type)")
        }
    }

    func string(_ key: String, isSecret: Bool = false) throws -> String? {
        try read(key, type: "a string") { try reader.requiredString(forKey: ConfigKey(key), isSecret: isSecret) }
    }

    func string(_ key: String, default fallback: String) throws -> String { try string(key) ?? fallback }

    /// One of `allowed`.
    func choice(_ key: String, _ allowed: [String], default fallback: String) throws -> String {
        let value = try string(key, default: fallback)
        guard allowed.contains(value) else {
            throw ConfigurationError.invalid("\(name(key)) must be \(allowed.joined(separator: " or ")), not \(value)")
        }
        return value
    }

    func int(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let value = try read(key, type: "an integer", { try reader.requiredInt(forKey: ConfigKey(key)) }) else { return nil }
        guard range.contains(value) else {
            throw ConfigurationError.invalid("\(name(key)) must be in \(range.lowerBound)...\(range.upperBound), not \(value)")
        }
        return value
    }

    func int(_ key: String, in range: ClosedRange<Int>, default fallback: Int) throws -> Int {
        try int(key, in: range) ?? fallback
    }

    func bool(_ key: String, default fallback: Bool) throws -> Bool {
        try bool(key) ?? fallback
    }

    func bool(_ key: String) throws -> Bool? {
        try read(key, type: "true or false", { try reader.requiredBool(forKey: ConfigKey(key)) })
    }

    /// An array of strings, or one string of comma-separated items.
    func list(_ key: String, isSecret: Bool = false) throws -> [String]? {
        do {
            return try reader.requiredStringArray(forKey: ConfigKey(key), isSecret: isSecret)
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        } catch {
            if "\(error)".hasPrefix("Missing required config value") { return nil }
        }
        guard
            let text = try read(
                key,
                type: "a list (an array of strings, or a comma-separated string)",
                {
                    try reader.requiredString(forKey: ConfigKey(key), isSecret: isSecret)
                }
            )
        else { return nil }
        return text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
