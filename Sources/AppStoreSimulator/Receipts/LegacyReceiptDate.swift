import Foundation

/// One date of a legacy `verifyReceipt` response as Apple writes it: the `x`, `x_ms` and `x_pst` strings.
///
/// `x` is `2013-08-01 07:00:00 Etc/GMT`, `x_ms` the epoch milliseconds in decimal, and `x_pst` the same
/// wall-clock format in `America/Los_Angeles` (which, despite the name, follows daylight saving time).
struct LegacyReceiptDate: Sendable, Hashable {
    /// `yyyy-MM-dd HH:mm:ss Etc/GMT`.
    var gmt: String
    /// Epoch milliseconds.
    var milliseconds: String
    /// `yyyy-MM-dd HH:mm:ss America/Los_Angeles`.
    var pacific: String

    init(_ date: Date) {
        // App Store dates are whole milliseconds; rounding absorbs the binary floating-point error of `Date`.
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded())
        // The text forms drop the milliseconds (truncating, also before 1970).
        let (quotient, remainder) = ms.quotientAndRemainder(dividingBy: 1000)
        let seconds = Date(timeIntervalSince1970: TimeInterval(remainder < 0 ? quotient - 1 : quotient))
        gmt = Self.format(seconds, in: Self.gmtCalendar, zone: "Etc/GMT")
        milliseconds = String(ms)
        pacific = Self.format(seconds, in: Self.pacificCalendar, zone: "America/Los_Angeles")
    }

    // Calendars are Sendable and thread-safe, unlike DateFormatter, so they can be shared statically.
    private static let gmtCalendar = calendar(TimeZone(identifier: "GMT")!)
    private static let pacificCalendar = calendar(TimeZone(identifier: "America/Los_Angeles")!)

    private static func calendar(_ zone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar
    }

    private static func format(_ date: Date, in calendar: Calendar, zone: String) -> String {
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func pad(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(c.year, 4))-\(pad(c.month, 2))-\(pad(c.day, 2)) \(pad(c.hour, 2)):\(pad(c.minute, 2)):"
            + "\(pad(c.second, 2)) \(zone)"
    }
}
