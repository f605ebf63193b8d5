import Foundation

/// A subscription or offer duration in ISO 8601 form (`P3D`, `P1W`, `P1M`, `P2M`, `P3M`, `P6M`, `P1Y`), added in
/// calendar units in UTC as the App Store does (a month from 31 January is the end of February).
public struct SubscriptionPeriod: Codable, Sendable, Hashable, CustomStringConvertible {
    public enum Unit: String, Codable, Sendable {
        case day = "D"
        case week = "W"
        case month = "M"
        case year = "Y"
    }

    public let value: Int
    public let unit: Unit

    public init(value: Int, unit: Unit) {
        self.value = value
        self.unit = unit
    }

    /// Parses `PnD`, `PnW`, `PnM` or `PnY`.
    public init?(iso8601 text: String) {
        guard text.count >= 3, text.first == "P", let unit = Unit(rawValue: String(text.last!)),
            let value = Int(text.dropFirst().dropLast()), value > 0
        else { return nil }
        self.init(value: value, unit: unit)
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let period = SubscriptionPeriod(iso8601: text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "\(text) is not an ISO 8601 period like P1M")
            )
        }
        self = period
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    public var description: String { "P\(value)\(unit.rawValue)" }

    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// `date` moved forward by this period (`times` periods).
    public func advance(_ date: Date, times: Int = 1) -> Date {
        let component: Calendar.Component
        var amount = value * times
        switch unit {
        case .day: component = .day
        case .week:
            component = .day
            amount *= 7
        case .month: component = .month
        case .year: component = .year
        }
        return Self.calendar.date(byAdding: component, value: amount, to: date) ?? date
    }

    /// Apple's sandbox renewal rate: how long this period lasts in sandbox time (reference §10, default rate).
    public var sandboxDuration: TimeInterval {
        switch (unit, value) {
        case (.week, 1): return 3 * 60
        case (.month, let months): return Double(months) * 5 * 60
        case (.year, let years): return Double(years) * 60 * 60
        case (.day, let days): return Double(days) * 5 * 60 / 30
        case (.week, let weeks): return Double(weeks) * 3 * 60
        }
    }
}
