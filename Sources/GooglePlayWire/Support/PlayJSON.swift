import Foundation

/// JSON as Google's APIs write it: lowerCamelCase names, int64 values as strings (``PlayInt64``), timestamps as
/// RFC 3339 in UTC with up to nanosecond fractions (`2026-10-01T12:34:56.789Z`), durations as seconds with an `s`.
public enum PlayJSON {
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = parseTimestamp(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an RFC 3339 timestamp: \(text.prefix(40))")
            }
            return date
        }
        return decoder
    }

    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(formatTimestamp(date))
        }
        return encoder
    }

    public static func decode<T: Decodable>(_ type: T.Type, from data: some Collection<UInt8>) throws -> T {
        try makeDecoder().decode(type, from: Data(data))
    }

    public static func encode(_ value: some Encodable) throws -> Data {
        try makeEncoder().encode(value)
    }

    /// `2026-10-01T12:34:56Z`, `…56.789Z`, `…56.789123456Z` or with an offset (`+02:00`): Google writes UTC with `Z`,
    /// and anything RFC 3339 allows is read. Fractions past milliseconds are kept to the microsecond.
    public static func parseTimestamp(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 40 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), bytes[4] == 0x2D, let month = number(5..<7), bytes[7] == 0x2D, let day = number(8..<10),
            bytes[10] == 0x54 || bytes[10] == 0x74, let hour = number(11..<13), bytes[13] == 0x3A, let minute = number(14..<16),
            bytes[16] == 0x3A, let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var fraction = 0.0
        if index < bytes.count, bytes[index] == 0x2E {
            index += 1
            var scale = 0.1
            let start = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                fraction += Double(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > start, index - start <= 9 else { return nil }
        }
        guard index < bytes.count else { return nil }
        var offset = 0
        switch bytes[index] {
        case 0x5A, 0x7A:
            index += 1
        case 0x2B, 0x2D:
            guard index + 6 == bytes.count, let hours = number(index + 1..<index + 3), bytes[index + 3] == 0x3A,
                let minutes = number(index + 4..<index + 6), hours < 24, minutes < 60
            else { return nil }
            offset = (hours * 3600 + minutes * 60) * (bytes[index] == 0x2B ? 1 : -1)
            index += 6
        default:
            return nil
        }
        guard index == bytes.count else { return nil }
        var components = DateComponents()
        components.calendar = Calendar(identifier: .gregorian)
        components.timeZone = TimeZone(secondsFromGMT: 0)
        components.year = year
        components.month = month
        components.day = day
        components.hour = hour
        components.minute = minute
        components.second = min(second, 59)
        guard let base = components.date, components.isValidDate else { return nil }
        return base.addingTimeInterval(fraction - Double(offset))
    }

    /// UTC with milliseconds, as Google writes them: `2026-10-01T12:34:56.789Z`.
    public static func formatTimestamp(_ date: Date) -> String {
        let millis = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let seconds = millis.quotientAndRemainder(dividingBy: 1000)
        let whole = Date(timeIntervalSince1970: TimeInterval(seconds.quotient - (seconds.remainder < 0 ? 1 : 0)))
        let fraction = seconds.remainder < 0 ? seconds.remainder + 1000 : seconds.remainder
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: whole)
        func pad(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.year, 4))-\(pad(parts.month, 2))-\(pad(parts.day, 2))T\(pad(parts.hour, 2)):\(pad(parts.minute, 2)):"
            + "\(pad(parts.second, 2)).\(pad(Int(fraction), 3))Z"
    }
}

/// An int64 the way Google's JSON carries it: a decimal string (`"1468825200000"`). A bare JSON number is read too
/// (some examples and older responses); it is always written as a string.
public struct PlayInt64: Codable, Sendable, Hashable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    public var value: Int64

    public init(_ value: Int64) { self.value = value }
    public init(integerLiteral value: Int64) { self.value = value }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            guard let value = Int64(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an int64: \(text.prefix(40))")
            }
            self.value = value
        } else {
            value = try container.decode(Int64.self)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(String(value))
    }

    public var description: String { String(value) }

    /// Epoch milliseconds as a date.
    public var date: Date { Date(timeIntervalSince1970: TimeInterval(value) / 1000) }

    /// A date as epoch milliseconds.
    public init(millis date: Date) { value = Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }
}

/// An empty message whose presence is the signal (`"testPurchase": {}`); any fields inside are ignored.
public struct PlayPresence: Codable, Sendable, Hashable {
    public init() {}
    public init(from decoder: any Decoder) throws { _ = try decoder.container(keyedBy: AnyKey.self) }
    public func encode(to encoder: any Encoder) throws { _ = encoder.container(keyedBy: AnyKey.self) }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
