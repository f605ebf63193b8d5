/// A string enumeration from Google (`SUBSCRIPTION_STATE_ACTIVE`) that may grow: unknown values decode and re-encode
/// unchanged, so a value Google adds is recorded, never rejected. Conformers are structs with `static let` values.
public protocol PlayStringEnum: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible, ExpressibleByStringLiteral
where RawValue == String {
    init(rawValue: String)
    /// The values Storekeeper knows, in documentation order.
    static var knownValues: [Self] { get }
}

extension PlayStringEnum {
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }
    public var isKnown: Bool { Self.knownValues.contains(self) }
}

/// An int32 enumeration from Google (RTDN `notificationType`, `voidedReason`) that may grow, kept like
/// ``PlayStringEnum``.
public protocol PlayIntEnum: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible, ExpressibleByIntegerLiteral
where RawValue == Int32 {
    init(rawValue: Int32)
    static var knownValues: [Self] { get }
    /// Google's name for the value (`SUBSCRIPTION_RENEWED`), for logs and operators.
    var name: String? { get }
}

extension PlayIntEnum {
    public init(integerLiteral value: Int32) { self.init(rawValue: value) }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(Int32.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { name.map { "\($0) (\(rawValue))" } ?? "unknown (\(rawValue))" }
    public var isKnown: Bool { Self.knownValues.contains(self) }
}
