import Foundation

/// An ISO 8601 duration of whole days, weeks, months or years (`P1W`, `P1M`, `P3M`, `P1Y`), applied in UTC.
public struct CatalogDuration: Sendable, Hashable, Codable, CustomStringConvertible {
    public enum Unit: Sendable, Hashable { case day, week, month, year }

    public let value: Int
    public let unit: Unit

    public init(value: Int, unit: Unit) {
        self.value = value
        self.unit = unit
    }

    /// Parses `P<n>D|W|M|Y`; anything else is `nil`.
    public init?(iso8601 text: String) {
        guard text.count >= 3, text.first == "P", let last = text.last,
            let value = Int(text.dropFirst().dropLast()), value > 0, value <= 1000
        else { return nil }
        switch last {
        case "D": unit = .day
        case "W": unit = .week
        case "M": unit = .month
        case "Y": unit = .year
        default: return nil
        }
        self.value = value
    }

    public var description: String {
        switch unit {
        case .day: "P\(value)D"
        case .week: "P\(value)W"
        case .month: "P\(value)M"
        case .year: "P\(value)Y"
        }
    }

    /// `date` moved forward by this duration on the UTC calendar (month ends clamp, as Apple's renewals do).
    public func added(to date: Date) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var components = DateComponents()
        switch unit {
        case .day: components.day = value
        case .week: components.day = 7 * value
        case .month: components.month = value
        case .year: components.year = value
        }
        return calendar.date(byAdding: components, to: date) ?? date.addingTimeInterval(Double(value) * 86_400)
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let parsed = CatalogDuration(iso8601: text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not an ISO 8601 duration like P1M: \(text)")
            )
        }
        self = parsed
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
