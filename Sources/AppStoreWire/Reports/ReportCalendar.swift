import Foundation

/// The days and months App Store Connect's reports are cut by.
///
/// A Sales and Trends day is a calendar day in the agreement's time zone — Pacific Time for the worldwide agreements
/// apps sell under — so a day can last 23 or 25 hours. A financial report covers one of Apple's fiscal months:
/// Sunday to Saturday, whole weeks, 5-4-4 weeks per quarter, the fiscal year ending on the last Saturday of September
/// (a 53rd week, every five or six years, goes to the first quarter's last month). Fiscal months are named by the
/// calendar month they mostly cover (`2026-01` runs 2025-12-28 to 2026-01-31).
public struct ReportCalendar: Sendable, Hashable {
    /// Apple's time zone for reports of worldwide agreements.
    public static let appleTimeZone = "America/Los_Angeles"

    public let timeZone: TimeZone
    private let local: Calendar
    private static let civil: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    public init(timeZone: TimeZone) {
        self.timeZone = timeZone
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        local = calendar
    }

    /// Apple's calendar: Pacific Time.
    public static let apple = ReportCalendar(timeZone: TimeZone(identifier: appleTimeZone)!)

    /// One civil day, `YYYY-MM-DD`.
    public struct Day: Sendable, Hashable, Comparable, CustomStringConvertible {
        public let year: Int
        public let month: Int
        public let day: Int

        /// Reads `YYYY-MM-DD` (years 2000–2200), or nil.
        public init?(_ text: String) {
            let parts = text.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0].utf8.count == 4, parts[1].utf8.count == 2, parts[2].utf8.count == 2,
                let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
                (2000...2200).contains(year), (1...12).contains(month), (1...31).contains(day)
            else { return nil }
            self.init(year: year, month: month, day: day)
            guard let date = ReportCalendar.civil.date(from: DateComponents(year: year, month: month, day: day)),
                ReportCalendar.civil.component(.day, from: date) == day
            else { return nil }
        }

        init(year: Int, month: Int, day: Int) {
            self.year = year
            self.month = month
            self.day = day
        }

        init(civil date: Date) {
            let parts = ReportCalendar.civil.dateComponents([.year, .month, .day], from: date)
            self.init(year: parts.year!, month: parts.month!, day: parts.day!)
        }

        /// Midnight UTC of the day: only for counting days, never an instant of the report.
        var civilDate: Date { ReportCalendar.civil.date(from: DateComponents(year: year, month: month, day: day))! }

        public func adding(days: Int) -> Day { Day(civil: civilDate.addingTimeInterval(Double(days) * 86_400)) }

        /// 1 = Sunday … 7 = Saturday.
        public var weekday: Int { ReportCalendar.civil.component(.weekday, from: civilDate) }

        public var description: String { String(format: "%04d-%02d-%02d", year, month, day) }
        /// Apple's `MM/DD/YYYY`.
        public var reportText: String { String(format: "%02d/%02d/%04d", month, day, year) }

        public static func < (a: Day, b: Day) -> Bool { (a.year, a.month, a.day) < (b.year, b.month, b.day) }
    }

    /// One of Apple's fiscal months: its name, first and last day.
    public struct FiscalMonth: Sendable, Hashable {
        /// `YYYY-MM`, the calendar month it mostly covers.
        public let name: String
        public let first: Day
        public let last: Day
        /// Whole weeks: 4 or 5 (6 for the first quarter's last month in a 53-week year).
        public var weeks: Int { (Int(last.civilDate.timeIntervalSince(first.civilDate) / 86_400) + 1) / 7 }
    }

    /// The instants `[start, end)` of `day` in this calendar's time zone.
    public func interval(of day: Day) -> DateInterval {
        let start = local.date(from: DateComponents(year: day.year, month: day.month, day: day.day))!
        let next = day.adding(days: 1)
        let end = local.date(from: DateComponents(year: next.year, month: next.month, day: next.day))!
        return DateInterval(start: start, end: end)
    }

    /// The instants `[first day's start, last day's end)`.
    public func interval(of month: FiscalMonth) -> DateInterval {
        DateInterval(start: interval(of: month.first).start, end: interval(of: month.last).end)
    }

    /// The day `date` falls on in this calendar's time zone.
    public func day(of date: Date) -> Day {
        let parts = local.dateComponents([.year, .month, .day], from: date)
        return Day(year: parts.year!, month: parts.month!, day: parts.day!)
    }

    /// The last Saturday of September of `year`: the end of Apple's fiscal year `year`.
    public static func fiscalYearEnd(_ year: Int) -> Day {
        var day = Day(year: year, month: 9, day: 30)
        while day.weekday != 7 { day = day.adding(days: -1) }
        return day
    }

    /// Apple's fiscal month named `YYYY-MM` (October opens the fiscal year named after the next calendar year).
    public static func fiscalMonth(_ name: String) -> FiscalMonth? {
        let parts = name.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].utf8.count == 4, parts[1].utf8.count == 2, let year = Int(parts[0]), let month = Int(parts[1]),
            (2000...2200).contains(year), (1...12).contains(month)
        else { return nil }
        let fiscalYear = month >= 10 ? year + 1 : year
        let period = month >= 10 ? month - 9 : month + 3
        let start = fiscalYearEnd(fiscalYear - 1).adding(days: 1)
        let weeksInYear = (Int(fiscalYearEnd(fiscalYear).civilDate.timeIntervalSince(start.civilDate) / 86_400) + 1) / 7
        // 5-4-4 weeks a quarter; a 53rd week lengthens the first quarter's last month.
        func weeks(_ period: Int) -> Int { (period % 3 == 1 ? 5 : 4) + (period == 3 && weeksInYear == 53 ? 1 : 0) }
        let before = (1..<period).reduce(0) { $0 + weeks($1) }
        let first = start.adding(days: before * 7)
        return FiscalMonth(name: String(format: "%04d-%02d", year, month), first: first, last: first.adding(days: weeks(period) * 7 - 1))
    }

    /// The fiscal month `day` belongs to.
    public static func fiscalMonth(containing day: Day) -> FiscalMonth {
        var year = day.year
        var month = day.month
        // The fiscal month named after the day's calendar month, or one of its neighbours.
        for _ in 0..<3 {
            let current = fiscalMonth(String(format: "%04d-%02d", year, month))!
            if day < current.first {
                (year, month) = month == 1 ? (year - 1, 12) : (year, month - 1)
            } else if current.last < day {
                (year, month) = month == 12 ? (year + 1, 1) : (year, month + 1)
            } else {
                return current
            }
        }
        return fiscalMonth(String(format: "%04d-%02d", year, month))!
    }
}
