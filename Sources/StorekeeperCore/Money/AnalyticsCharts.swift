import Foundation

/// A rolled-up figure as read back: one day (or cohort and age), one metric, one value of the breakdown dimension
/// (`part`, empty without one), one currency.
public struct AnalyticsCell: Sendable, Hashable {
    public var day: String
    public var metric: AnalyticsMetric
    public var part: String
    public var currency: String
    public var value: Int64

    public init(day: String, metric: AnalyticsMetric, part: String, currency: String, value: Int64) {
        self.day = day
        self.metric = metric
        self.part = part
        self.currency = currency
        self.value = value
    }
}

/// Daily exchange rates into the reporting currency, in millionths of the reporting currency per unit: a day uses
/// the latest rate on or before it.
public struct ExchangeRates: Sendable, Hashable {
    public var reportingCurrency: String
    private var rates: [String: [(day: String, micros: Int64)]] = [:]

    public static func == (lhs: ExchangeRates, rhs: ExchangeRates) -> Bool {
        lhs.reportingCurrency == rhs.reportingCurrency && lhs.rates.keys == rhs.rates.keys
            && lhs.rates.allSatisfy { key, value in
                rhs.rates[key].map { $0.map(\.day) == value.map(\.day) && $0.map(\.micros) == value.map(\.micros) } ?? false
            }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(reportingCurrency)
        hasher.combine(rates.count)
    }

    public init(reportingCurrency: String, rates: [(day: String, currency: String, micros: Int64)] = []) {
        self.reportingCurrency = reportingCurrency
        for rate in rates where rate.micros > 0 { self.rates[rate.currency, default: []].append((rate.day, rate.micros)) }
        for key in self.rates.keys { self.rates[key]!.sort { $0.day < $1.day } }
    }

    /// Every rate, by currency and day.
    public var all: [(day: String, currency: String, micros: Int64)] {
        rates.keys.sorted().flatMap { currency in rates[currency]!.map { (day: $0.day, currency: currency, micros: $0.micros) } }
    }

    /// `milliunits` of `currency` on `day` in the reporting currency, rounded half away from zero; nil without a rate.
    public func convert(_ milliunits: Int64, currency: String, day: String) -> Int64? {
        if currency == reportingCurrency { return milliunits }
        guard let list = rates[currency], let rate = list.last(where: { $0.day <= day }) ?? nil else { return nil }
        // |milliunits| ≤ 2^63 and micros ≤ 10^12 (bounded where rates come in): multiply in 128 bits.
        let product = Int128(milliunits) * Int128(rate.micros)
        let half = product >= 0 ? Int128(500_000) : Int128(-500_000)
        let result = (product + half) / 1_000_000
        return Int64(clamping: result)
    }
}

/// The charts the console draws and the API serves: each a metric over a range of days, bucketed by day, week or
/// month, optionally broken down by one dimension, with the previous range of the same length beside it.
public enum AnalyticsChartMetric: String, Sendable, Hashable, CaseIterable {
    case mrr, arr
    case activeSubscriptions = "active_subscriptions"
    case activeTrials = "active_trials"
    case newSubscriptions = "new_subscriptions"
    case reactivations
    /// Paid periods after a paid one (conversions from a trial and reactivations apart).
    case renewals
    case churn
    case trialStarts = "trial_starts"
    case trialConversions = "trial_conversions"
    case conversionRate = "conversion_rate"
    case revenue
    case refunds
    case refundRate = "refund_rate"
    case arpu, arppu

    /// What a point's value counts.
    public enum Unit: String, Sendable {
        /// Subscribers, periods, events.
        case count
        /// Milliunits of the chart's currency.
        case milliunits
        /// A ratio in hundredths of a percent.
        case basisPoints = "basis_points"
    }

    public var unit: Unit {
        switch self {
        case .mrr, .arr, .revenue, .arpu, .arppu: .milliunits
        case .conversionRate, .refundRate: .basisPoints
        default: .count
        }
    }

    /// The rolled-up metrics it reads.
    public var inputs: [AnalyticsMetric] {
        switch self {
        case .mrr, .arr: [.mrr]
        case .activeSubscriptions: [.active]
        case .activeTrials: [.trials]
        case .newSubscriptions: [.new]
        case .reactivations: [.reactivation]
        case .renewals: [.renewal]
        case .churn: [.voluntaryChurn, .involuntaryChurn]
        case .trialStarts: [.trialStart]
        case .trialConversions: [.conversion]
        case .conversionRate: [.trialStart, .conversion]
        case .revenue: [.revenue, .refunded]
        case .refunds: [.refunds]
        case .refundRate: [.refunds, .paid]
        case .arpu: [.revenue, .refunded, .active, .trials]
        case .arppu: [.revenue, .refunded, .active]
        }
    }

    /// A line on the chart: for churn, voluntary and involuntary apart; for revenue, gross, refunded and net.
    var components: [String] {
        switch self {
        case .churn: ["voluntary", "involuntary"]
        case .revenue: ["gross", "refunded", "net"]
        default: [""]
        }
    }

    public var title: String {
        switch self {
        case .mrr: "Monthly recurring revenue"
        case .arr: "Annual recurring revenue"
        case .activeSubscriptions: "Active subscriptions"
        case .activeTrials: "Active trials"
        case .newSubscriptions: "New subscriptions"
        case .reactivations: "Reactivations"
        case .renewals: "Renewals"
        case .churn: "Churned subscriptions"
        case .trialStarts: "Trial starts"
        case .trialConversions: "Trial conversions"
        case .conversionRate: "Trial-to-paid conversion"
        case .revenue: "Revenue"
        case .refunds: "Refunds"
        case .refundRate: "Refund rate"
        case .arpu: "ARPU"
        case .arppu: "ARPPU"
        }
    }

    /// Drawn as bars (events in a bucket) rather than a line (a level or a ratio).
    public var isBar: Bool {
        switch self {
        case .newSubscriptions, .reactivations, .renewals, .churn, .trialStarts, .trialConversions, .revenue, .refunds: true
        default: false
        }
    }
}

/// How a chart's days are bucketed.
public enum AnalyticsInterval: String, Sendable, Hashable, CaseIterable {
    case day, week, month

    /// The first day of `day`'s bucket (weeks begin on Monday).
    public func bucket(_ day: String) -> String {
        switch self {
        case .day: return day
        case .month: return String(day.prefix(7)) + "-01"
        case .week:
            guard let date = AnalyticsDays.date(day) else { return day }
            let days = Int64(date.timeIntervalSince1970 / 86_400)
            // 1970-01-01 was a Thursday: days since a Monday is (days + 3) mod 7.
            let offset = ((days + 3) % 7 + 7) % 7
            return RevenueReportBuilder.day(date.addingTimeInterval(-Double(offset) * 86_400))
        }
    }
}

/// Day arithmetic on `YYYY-MM-DD` in UTC.
public enum AnalyticsDays {
    /// Midnight UTC of `day`; nil unless it is a real date.
    public static func date(_ day: String) -> Date? {
        let parts = day.split(separator: "-", omittingEmptySubsequences: false)
        guard day.utf8.count == 10, parts.count == 3, let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
            (1970...9999).contains(y), (1...12).contains(m), (1...31).contains(d)
        else { return nil }
        var components = DateComponents()
        (components.year, components.month, components.day) = (y, m, d)
        guard let date = SubscriptionRollup.calendar.date(from: components), RevenueReportBuilder.day(date) == day else { return nil }
        return date
    }

    /// Every day in `[from, to)`.
    public static func range(from: String, to: String) -> [String] {
        guard let start = date(from), let end = date(to), start < end else { return [] }
        let count = Int(end.timeIntervalSince(start) / 86_400)
        return (0..<count).map { RevenueReportBuilder.day(start.addingTimeInterval(Double($0) * 86_400)) }
    }

    /// `day` moved by `days`.
    public static func adding(_ days: Int, to day: String) -> String? {
        date(day).map { RevenueReportBuilder.day($0.addingTimeInterval(Double(days) * 86_400)) }
    }
}

/// A chart: series of points, each point a bucket's first day and its value.
public struct AnalyticsChart: Sendable, Hashable {
    public struct Point: Sendable, Hashable {
        /// The bucket's first day.
        public var period: String
        public var value: Int64
    }

    public struct Series: Sendable, Hashable {
        /// The breakdown value and component (`voluntary`, `net`), joined by " · "; empty for a single line.
        public var name: String
        public var points: [Point]
    }

    public var metric: AnalyticsChartMetric
    public var interval: AnalyticsInterval
    public var from: String
    public var to: String
    /// The currency money is in (the reporting currency, or the one the filter chose).
    public var currency: String
    public var series: [Series]
    /// Currencies left out of money figures for want of an exchange rate.
    public var missingRates: [String]

    /// Builds the chart of `metric` over the days `[from, to)` from its inputs' cells in range and, for stock
    /// metrics, their sums before `from` (`base`).
    public static func build(
        _ metric: AnalyticsChartMetric,
        interval: AnalyticsInterval,
        from: String,
        to: String,
        cells: [AnalyticsCell],
        base: [AnalyticsCell],
        rates: ExchangeRates
    ) -> AnalyticsChart {
        let days = AnalyticsDays.range(from: from, to: to)
        var missing: Set<String> = []
        // Per part: each input metric's value per day (money converted on its day).
        var daily: [String: [AnalyticsMetric: [String: Int64]]] = [:]
        var opening: [String: [AnalyticsMetric: Int64]] = [:]
        func value(_ cell: AnalyticsCell, day: String) -> Int64? {
            guard cell.metric.isMoney else { return cell.value }
            guard let converted = rates.convert(cell.value, currency: cell.currency, day: day) else {
                missing.insert(cell.currency)
                return nil
            }
            return converted
        }
        // Stock money (MRR) is kept per currency until each day's level is known, then converted on that day.
        var stockMoney: [String: [String: [String: Int64]]] = [:]  // part → currency → day → change
        var stockMoneyBase: [String: [String: Int64]] = [:]  // part → currency → level before `from`
        for cell in base where cell.metric.isStock {
            if cell.metric.isMoney {
                stockMoneyBase[cell.part, default: [:]][cell.currency, default: 0].addSaturating(cell.value)
            } else {
                opening[cell.part, default: [:]][cell.metric, default: 0].addSaturating(cell.value)
            }
        }
        for cell in cells {
            if cell.metric.isStock, cell.metric.isMoney {
                stockMoney[cell.part, default: [:]][cell.currency, default: [:]][cell.day, default: 0].addSaturating(cell.value)
                continue
            }
            guard let v = value(cell, day: cell.day) else { continue }
            daily[cell.part, default: [:]][cell.metric, default: [:]][cell.day, default: 0].addSaturating(v)
        }
        let parts = Set(daily.keys).union(opening.keys).union(stockMoney.keys).union(stockMoneyBase.keys).sorted()
        var series: [Series] = []
        for part in parts.isEmpty ? [""] : parts {
            // Levels per day for stock inputs.
            var levels: [AnalyticsMetric: [String: Int64]] = [:]
            for input in metric.inputs where input.isStock {
                if input.isMoney {
                    var perCurrency = stockMoneyBase[part] ?? [:]
                    for currency in (stockMoney[part] ?? [:]).keys where perCurrency[currency] == nil { perCurrency[currency] = 0 }
                    for day in days {
                        var total: Int64 = 0
                        for currency in perCurrency.keys.sorted() {
                            perCurrency[currency]!.addSaturating(stockMoney[part]?[currency]?[day] ?? 0)
                            let level = perCurrency[currency]!
                            guard level != 0 else { continue }
                            if let converted = rates.convert(level, currency: currency, day: day) {
                                total.addSaturating(converted)
                            } else {
                                missing.insert(currency)
                            }
                        }
                        levels[input, default: [:]][day] = total
                    }
                } else {
                    var level = opening[part]?[input] ?? 0
                    for day in days {
                        level.addSaturating(daily[part]?[input]?[day] ?? 0)
                        levels[input, default: [:]][day] = level
                    }
                }
            }
            func flow(_ input: AnalyticsMetric, _ bucketDays: [String]) -> Int64 {
                bucketDays.reduce(Int64(0)) { $0.addingSaturating(daily[part]?[input]?[$1] ?? 0) }
            }
            func level(_ input: AnalyticsMetric, _ bucketDays: [String]) -> Int64 {
                bucketDays.last.flatMap { levels[input]?[$0] } ?? 0
            }
            func average(_ inputs: [AnalyticsMetric], _ bucketDays: [String]) -> Double {
                guard !bucketDays.isEmpty else { return 0 }
                let sum = bucketDays.reduce(0.0) { total, day in total + inputs.reduce(0.0) { $0 + Double(levels[$1]?[day] ?? 0) } }
                return sum / Double(bucketDays.count)
            }
            func ratio(_ numerator: Int64, _ denominator: Int64) -> Int64 {
                denominator > 0 ? Int64((Double(numerator) * 10_000 / Double(denominator)).rounded()) : 0
            }
            var buckets: [(String, [String])] = []
            for day in days {
                let key = interval.bucket(day)
                if buckets.last?.0 == key { buckets[buckets.count - 1].1.append(day) } else { buckets.append((key, [day])) }
            }
            for component in metric.components {
                var points: [Point] = []
                for (key, bucketDays) in buckets {
                    let v: Int64
                    switch metric {
                    case .mrr: v = level(.mrr, bucketDays)
                    case .arr: v = level(.mrr, bucketDays).multipliedSaturating(by: 12)
                    case .activeSubscriptions: v = level(.active, bucketDays)
                    case .activeTrials: v = level(.trials, bucketDays)
                    case .newSubscriptions: v = flow(.new, bucketDays)
                    case .reactivations: v = flow(.reactivation, bucketDays)
                    case .renewals: v = flow(.renewal, bucketDays)
                    case .churn: v = flow(component == "voluntary" ? .voluntaryChurn : .involuntaryChurn, bucketDays)
                    case .trialStarts: v = flow(.trialStart, bucketDays)
                    case .trialConversions: v = flow(.conversion, bucketDays)
                    case .conversionRate: v = ratio(flow(.conversion, bucketDays), flow(.trialStart, bucketDays))
                    case .revenue:
                        let gross = flow(.revenue, bucketDays)
                        let refunded = flow(.refunded, bucketDays)
                        v = component == "gross" ? gross : component == "refunded" ? refunded : gross.addingSaturating(-refunded)
                    case .refunds: v = flow(.refunds, bucketDays)
                    case .refundRate: v = ratio(flow(.refunds, bucketDays), flow(.paid, bucketDays))
                    case .arpu, .arppu:
                        let net = flow(.revenue, bucketDays).addingSaturating(-flow(.refunded, bucketDays))
                        let users = average(metric == .arpu ? [.active, .trials] : [.active], bucketDays)
                        v = users > 0 ? Int64((Double(net) / users).rounded()) : 0
                    }
                    points.append(Point(period: key, value: v))
                }
                let name = [part, component].filter { !$0.isEmpty }.joined(separator: " · ")
                series.append(Series(name: name, points: points))
            }
        }
        return AnalyticsChart(
            metric: metric,
            interval: interval,
            from: from,
            to: to,
            currency: rates.reportingCurrency,
            series: series,
            missingRates: missing.sorted()
        )
    }
}

/// Cohorts by the month of their first period: size, how many were still subscribed each month after, and the
/// revenue they brought in (realized lifetime value), month by month.
public struct AnalyticsCohorts: Sendable, Hashable {
    public struct Row: Sendable, Hashable {
        /// `YYYY-MM`.
        public var cohort: String
        public var subscribers: Int64
        /// Index = age in months (0 … ``SubscriptionRollup/maxAge``): subscribed at that age.
        public var active: [Int64]
        /// Index = age: net revenue (gross less refunds) from periods bought before that age ends, per subscriber,
        /// in milliunits — the realized lifetime value after `age + 1` months.
        public var lifetimeValue: [Int64]
        /// Ages whose month has passed for every member of the cohort (later cells are still filling).
        public var completeAges: Int
    }

    public var currency: String
    public var rows: [Row]
    public var missingRates: [String]

    /// Builds the triangle from cohort cells (`day` holding the cohort month, `part` unused) as of `asOf`.
    public static func build(cells: [(cohort: String, age: Int, cell: AnalyticsCell)], rates: ExchangeRates, asOf: Date) -> AnalyticsCohorts {
        var subscribers: [String: Int64] = [:]
        var active: [String: [Int: Int64]] = [:]
        var net: [String: [Int: Int64]] = [:]
        var missing: Set<String> = []
        for (cohort, age, cell) in cells {
            switch cell.metric {
            case .subscribers: subscribers[cohort, default: 0].addSaturating(cell.value)
            case .active: active[cohort, default: [:]][age, default: 0].addSaturating(cell.value)
            case .revenue, .refunded:
                // Converted on the cohort's first day (a cohort's revenue spans months; one rate keeps rows comparable).
                guard let converted = rates.convert(cell.value, currency: cell.currency, day: cohort + "-01") else {
                    missing.insert(cell.currency)
                    continue
                }
                net[cohort, default: [:]][age, default: 0].addSaturating(cell.metric == .revenue ? converted : -converted)
            default: continue
            }
        }
        let rows = Set(subscribers.keys).union(net.keys).sorted().map { cohort -> Row in
            let size = subscribers[cohort] ?? 0
            var ltv: [Int64] = []
            var cumulative: Int64 = 0
            for age in 0...SubscriptionRollup.maxAge {
                cumulative.addSaturating(net[cohort]?[age] ?? 0)
                ltv.append(size > 0 ? Int64((Double(cumulative) / Double(size)).rounded()) : 0)
            }
            var activeByAge = (0...SubscriptionRollup.maxAge).map { active[cohort]?[$0] ?? 0 }
            activeByAge[0] = size
            // The cohort's last member joined by its month's end: age k is complete k months after that.
            var complete = 0
            if let first = AnalyticsDays.date(cohort + "-01") {
                let monthEnd = SubscriptionRollup.adding(months: 1, to: first)
                while complete <= SubscriptionRollup.maxAge, SubscriptionRollup.adding(months: complete, to: monthEnd) <= asOf {
                    complete += 1
                }
            }
            return Row(cohort: cohort, subscribers: size, active: activeByAge, lifetimeValue: ltv, completeAges: complete)
        }
        return AnalyticsCohorts(currency: rates.reportingCurrency, rows: rows, missingRates: missing.sorted())
    }
}

/// Renewal rates by paid period number over a range: of the paid periods number `n` that ended in it, how many
/// renewed into a paid period.
public struct AnalyticsRenewalRates: Sendable, Hashable {
    public struct Line: Sendable, Hashable {
        /// 1 … ``SubscriptionRollup/maxPeriodNumber`` (the last counts every later period too).
        public var period: Int
        public var due: Int64
        public var renewed: Int64
        /// Hundredths of a percent.
        public var rate: Int64
    }

    public var lines: [Line]

    public init(cells: [AnalyticsCell]) {
        var due: [Int: Int64] = [:]
        var renewed: [Int: Int64] = [:]
        for cell in cells {
            switch cell.metric {
            case .renewalsDue(let n): due[n, default: 0].addSaturating(cell.value)
            case .renewed(let n): renewed[n, default: 0].addSaturating(cell.value)
            default: continue
            }
        }
        lines = Set(due.keys).union(renewed.keys).sorted().map { n in
            let d = due[n] ?? 0
            let r = renewed[n] ?? 0
            return Line(period: n, due: d, renewed: r, rate: d > 0 ? Int64((Double(r) * 10_000 / Double(d)).rounded()) : 0)
        }
    }
}

extension Int64 {
    mutating func addSaturating(_ other: Int64) { self = addingSaturating(other) }

    func multipliedSaturating(by other: Int64) -> Int64 {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        guard overflow else { return product }
        return (self < 0) != (other < 0) ? .min : .max
    }
}
