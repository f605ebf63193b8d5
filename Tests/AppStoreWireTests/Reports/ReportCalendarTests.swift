import AppStoreWire
import Foundation
import Testing

/// Report days in Pacific Time and Apple's fiscal months (5-4-4 weeks, Sunday to Saturday, the year ending on the
/// last Saturday of September).
@Suite("Report calendar")
struct ReportCalendarTests {
    static func day(_ text: String) throws -> ReportCalendar.Day { try #require(ReportCalendar.Day(text)) }

    @Test("fiscal year 2024 as Apple published it: October 1 to November 4, 2023, then 4, 4 and 5 weeks")
    func publishedYear() throws {
        let expected = [
            ("2023-10", "2023-10-01", "2023-11-04"), ("2023-11", "2023-11-05", "2023-12-02"), ("2023-12", "2023-12-03", "2023-12-30"),
            ("2024-01", "2023-12-31", "2024-02-03"), ("2024-09", "2024-09-01", "2024-09-28"),
        ]
        for (name, first, last) in expected {
            let month = try #require(ReportCalendar.fiscalMonth(name))
            #expect(month.first.description == first && month.last.description == last, "\(name): \(month.first) – \(month.last)")
        }
        // Fiscal 2025 ran 2024-09-29 to 2025-09-27 (Apple's annual report).
        #expect(ReportCalendar.fiscalYearEnd(2024).description == "2024-09-28")
        #expect(ReportCalendar.fiscalYearEnd(2025).description == "2025-09-27")
        #expect(ReportCalendar.fiscalMonth("2024-10")?.first.description == "2024-09-29")
    }

    @Test("every fiscal year 2015-2035 is twelve contiguous Sunday-to-Saturday months, 52 or 53 weeks, 5-4-4 a quarter")
    func everyYear() throws {
        for year in 2015...2035 {
            var previous: ReportCalendar.FiscalMonth?
            var weeks = 0
            for month in [10, 11, 12, 1, 2, 3, 4, 5, 6, 7, 8, 9] {
                let name = String(format: "%04d-%02d", month >= 10 ? year - 1 : year, month)
                let fiscal = try #require(ReportCalendar.fiscalMonth(name))
                #expect(fiscal.first.weekday == 1 && fiscal.last.weekday == 7, "\(name)")
                if let previous { #expect(previous.last.adding(days: 1) == fiscal.first, "\(name) follows \(previous.name)") }
                #expect(
                    ReportCalendar.fiscalMonth(containing: fiscal.first) == fiscal && ReportCalendar.fiscalMonth(containing: fiscal.last) == fiscal
                )
                weeks += fiscal.weeks
                previous = fiscal
            }
            #expect(previous?.last == ReportCalendar.fiscalYearEnd(year))
            #expect(weeks == 52 || weeks == 53, "\(year): \(weeks) weeks")
            // Fiscal 2023 (September 25, 2022 to September 30, 2023) had 53 weeks, the 53rd in the first quarter.
            if year == 2023 {
                #expect(weeks == 53)
                #expect(ReportCalendar.fiscalMonth("2022-12")?.weeks == 5 && ReportCalendar.fiscalMonth("2023-01")?.first.description == "2023-01-01")
            }
        }
    }

    @Test("a report day is a Pacific Time day: 24 hours, 23 when clocks go forward, 25 when they go back")
    func pacificDays() throws {
        let calendar = ReportCalendar.apple
        let winter = calendar.interval(of: try Self.day("2026-01-10"))
        #expect(winter.start == (try Date("2026-01-10T08:00:00Z", strategy: .iso8601)) && winter.duration == 86_400)
        #expect(calendar.interval(of: try Self.day("2026-03-08")).duration == 23 * 3_600)
        #expect(calendar.interval(of: try Self.day("2026-11-01")).duration == 25 * 3_600)
        #expect(calendar.day(of: try Date("2026-01-01T07:59:59Z", strategy: .iso8601)).description == "2025-12-31")
        #expect(calendar.day(of: try Date("2026-01-01T08:00:00Z", strategy: .iso8601)).description == "2026-01-01")
        let utc = ReportCalendar(timeZone: TimeZone(identifier: "UTC")!)
        #expect(utc.interval(of: try Self.day("2026-03-08")).duration == 86_400)
    }

    @Test("names that are not days or months are refused")
    func refused() {
        for bad in ["2026-02-30", "2026-13-01", "26-01-01", "2026-1-01", "2026-01-1", "1999-12-31", "2026-01-01 ", "", "x"] {
            #expect(ReportCalendar.Day(bad) == nil, "\(bad)")
        }
        for bad in ["2026-13", "2026-00", "2026-1", "2026", "2026-01-01", "abcd-ef"] {
            #expect(ReportCalendar.fiscalMonth(bad) == nil, "\(bad)")
        }
        #expect(ReportCalendar.Day("2028-02-29") != nil && ReportCalendar.Day("2027-02-29") == nil)
    }
}
