/// A string-valued enumeration from Apple that may grow: unknown values decode and re-encode unchanged.
///
/// Apple adds notification types, subtypes and offer kinds every year; a value Storekeeper does not know yet
/// must survive decoding so it can be recorded, not rejected. Conformers are structs with a `rawValue` and
/// `static let` constants for the known values.
public protocol OpenStringEnum: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
where RawValue == String {
    init(rawValue: String)
    /// The values Storekeeper knows about, in documentation order.
    static var knownValues: [Self] { get }
}

extension OpenStringEnum {
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }

    /// Whether this value is one Storekeeper knows (false for values Apple added later).
    public var isKnown: Bool { Self.knownValues.contains(self) }
}

/// An integer-valued enumeration from Apple that may grow: unknown values decode and re-encode unchanged.
public protocol OpenIntEnum: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByIntegerLiteral
where RawValue == Int32 {
    init(rawValue: Int32)
    /// The values Storekeeper knows about, in documentation order.
    static var knownValues: [Self] { get }
}

extension OpenIntEnum {
    public init(integerLiteral value: Int32) { self.init(rawValue: value) }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(Int32.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { String(rawValue) }

    /// Whether this value is one Storekeeper knows (false for values Apple added later).
    public var isKnown: Bool { Self.knownValues.contains(self) }
}
