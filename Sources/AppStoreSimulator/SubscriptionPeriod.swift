import Foundation

/// A subscription or offer duration in ISO 8601 form (`P3D`, `P1W`, `P1M`, `P2M`, `P3M`, `P6M`, `P1Y`), added in
/// calendar units in UTC as the App Store does (a month from 31 January is the end of February). Renewals in months or
/// years stay on the billing day the cycle began on, the month's last day when it is shorter (31 January, 28 February,
/// 31 March), as Apple's In-App Purchase Programming Guide describes: a subscription "renews on the monthly anniversary"
/// of its start, "on the last day of the month" where the month has fewer days.
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

    /// Whether this period is counted in calendar months (months or years), so it renews on a billing day.
    public var isMonthly: Bool { unit == .month || unit == .year }

    /// `date` moved forward by this period (`times` periods); for months and years, on `anchor`'s day of the month
    /// when the month has it (else its last day), so a cycle begun on the 31st does not drift to the 28th.
    public func advance(_ date: Date, times: Int = 1, keepingDayOf anchor: Date? = nil) -> Date {
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
        guard let moved = Self.calendar.date(byAdding: component, value: amount, to: date) else { return date }
        guard let anchor, isMonthly else { return moved }
        let billingDay = Self.calendar.component(.day, from: anchor)
        let day = Self.calendar.component(.day, from: moved)
        guard day < billingDay, let days = Self.calendar.range(of: .day, in: .month, for: moved) else { return moved }
        return Self.calendar.date(byAdding: .day, value: min(billingDay, days.count) - day, to: moved) ?? moved
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
