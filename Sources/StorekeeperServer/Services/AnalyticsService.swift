import Foundation
import StorekeeperCore
import StorekeeperStorage

/// The subscription analytics the console draws and the API and CLI serve: charts, cohorts, renewal rates and the
/// subscriptions behind a point, read from the rollups (brought up to date first) in the reporting currency.
struct AnalyticsService: Sendable {
    let store: AnalyticsStore
    let reportingCurrency: String

    /// The most days one chart covers (two years and a day: a year-on-year comparison of a year).
    static let maxDays = 732
    /// Changes rolled up before a read at most (the job does the rest; a read names what is still queued).
    static let refreshBeforeRead = 20

    /// A chart with the range before it of the same length (`compare`), and the changes not yet rolled up.
    struct ChartAnswer: Sendable {
        var chart: AnalyticsChart
        var previous: AnalyticsChart?
        var pending: Int
    }

    /// Brings the rollups up to date (bounded), returning what is still queued.
    func catchUp() async throws -> Int {
        try await store.refreshAll(limit: 500, maxBatches: Self.refreshBeforeRead)
    }

    func chart(
        _ metric: AnalyticsChartMetric,
        from: String,
        to: String,
        interval: AnalyticsInterval,
        by: AnalyticsStore.Dimension?,
        filter: AnalyticsStore.Filter,
        compare: Bool,
        caughtUp: Int? = nil
    ) async throws -> ChartAnswer {
        let days = try Self.checkRange(from: from, to: to)
        let pending = try await Self.pending(caughtUp) { try await catchUp() }
        let current = try await build(metric, from: from, to: to, interval: interval, by: by, filter: filter)
        var previous: AnalyticsChart?
        if compare, let start = AnalyticsDays.adding(-days, to: from) {
            previous = try await build(metric, from: start, to: from, interval: interval, by: by, filter: filter)
        }
        return ChartAnswer(chart: current, previous: previous, pending: pending)
    }

    private func build(
        _ metric: AnalyticsChartMetric,
        from: String,
        to: String,
        interval: AnalyticsInterval,
        by: AnalyticsStore.Dimension?,
        filter: AnalyticsStore.Filter
    ) async throws -> AnalyticsChart {
        let (cells, base) = try await store.days(metric.inputs, fromDay: from, toDay: to, filter: filter, by: by)
        return AnalyticsChart.build(
            metric,
            interval: interval,
            from: from,
            to: to,
            cells: cells,
            base: base,
            rates: try await rates(filter: filter, from: from, to: to)
        )
    }

    /// The exchange rates for a range: none needed when the filter picks one currency (figures stay in it).
    private func rates(filter: AnalyticsStore.Filter, from: String, to: String) async throws -> ExchangeRates {
        if let currency = filter.currency { return ExchangeRates(reportingCurrency: currency) }
        return try await store.exchangeRates(reportingCurrency: reportingCurrency, fromDay: from, toDay: to)
    }

    func cohorts(
        fromMonth: String,
        toMonth: String,
        filter: AnalyticsStore.Filter,
        asOf: Date,
        caughtUp: Int? = nil
    ) async throws -> (AnalyticsCohorts, Int) {
        guard Self.isMonth(fromMonth), Self.isMonth(toMonth), fromMonth < toMonth else {
            throw StorekeeperError.invalidInput("invalid_range", "from and to must be months (YYYY-MM) in order")
        }
        let pending = try await Self.pending(caughtUp) { try await catchUp() }
        let cells = try await store.cohorts(fromMonth: fromMonth, toMonth: toMonth, filter: filter)
        let rates = try await rates(filter: filter, from: fromMonth + "-01", to: toMonth + "-01")
        return (AnalyticsCohorts.build(cells: cells, rates: rates, asOf: asOf), pending)
    }

    func renewalRates(
        from: String,
        to: String,
        filter: AnalyticsStore.Filter,
        caughtUp: Int? = nil
    ) async throws -> (AnalyticsRenewalRates, Int) {
        _ = try Self.checkRange(from: from, to: to)
        let pending = try await Self.pending(caughtUp) { try await catchUp() }
        let metrics = (1...SubscriptionRollup.maxPeriodNumber).flatMap { [AnalyticsMetric.renewalsDue($0), .renewed($0)] }
        let (cells, _) = try await store.days(metrics, fromDay: from, toDay: to, filter: filter)
        return (AnalyticsRenewalRates(cells: cells), pending)
    }

    /// MRR, ARR, active subscriptions and active trials on `day`, from one read of the rollups (the console's tiles;
    /// call ``catchUp()`` first).
    func headline(day: String, filter: AnalyticsStore.Filter) async throws -> [(AnalyticsChartMetric, AnalyticsChart)] {
        guard let next = AnalyticsDays.adding(1, to: day) else { return [] }
        let (cells, base) = try await store.days([.mrr, .active, .trials], fromDay: day, toDay: next, filter: filter)
        let rates = try await rates(filter: filter, from: day, to: next)
        return [AnalyticsChartMetric.mrr, .arr, .activeSubscriptions, .activeTrials].map { metric in
            (metric, AnalyticsChart.build(metric, interval: .day, from: day, to: next, cells: cells, base: base, rates: rates))
        }
    }

    func contributors(
        _ metric: AnalyticsChartMetric,
        day: String,
        filter: AnalyticsStore.Filter,
        limit: Int
    ) async throws -> [AnalyticsStore.Contributor] {
        guard AnalyticsDays.date(day) != nil else { throw StorekeeperError.invalidInput("invalid_day", "day must be a date (YYYY-MM-DD)") }
        _ = try await catchUp()
        return try await store.contributors(metric.inputs, day: day, filter: filter, limit: limit)
    }

    /// What a caller that already caught up saw queued, or a catch-up now.
    static func pending(_ caughtUp: Int?, _ catchUp: () async throws -> Int) async throws -> Int {
        if let caughtUp { return caughtUp }
        return try await catchUp()
    }

    /// The number of days in `[from, to)`, or a 400.
    static func checkRange(from: String, to: String) throws -> Int {
        guard let start = AnalyticsDays.date(from), let end = AnalyticsDays.date(to), start < end else {
            throw StorekeeperError.invalidInput("invalid_range", "from and to must be dates (YYYY-MM-DD) in order")
        }
        let days = Int(end.timeIntervalSince(start) / 86_400)
        guard days <= maxDays else {
            throw StorekeeperError.invalidInput("invalid_range", "a chart covers at most \(maxDays) days")
        }
        return days
    }

    static func isMonth(_ text: String) -> Bool { text.utf8.count == 7 && AnalyticsDays.date(text + "-01") != nil }

    // MARK: - CSV

    /// A chart as CSV: one row per period and series (money in milliunits, ratios in basis points).
    static func csv(_ answer: ChartAnswer) -> String {
        var out = "metric,series,period,value,unit,currency,comparison\r\n"
        func rows(_ chart: AnalyticsChart, comparison: Bool) {
            for series in chart.series {
                for point in series.points {
                    out +=
                        [
                            chart.metric.rawValue, CSVField.escape(series.name), point.period, String(point.value), chart.metric.unit.rawValue,
                            chart.metric.unit == .milliunits ? chart.currency : "", comparison ? "previous" : "current",
                        ].joined(separator: ",") + "\r\n"
                }
            }
        }
        rows(answer.chart, comparison: false)
        if let previous = answer.previous { rows(previous, comparison: true) }
        return out
    }

    static func csv(_ cohorts: AnalyticsCohorts) -> String {
        var out = "cohort,age_months,subscribers,active,retention_basis_points,ltv,currency,complete\r\n"
        for row in cohorts.rows {
            for age in 0...SubscriptionRollup.maxAge {
                let retention = row.subscribers > 0 ? Int64((Double(row.active[age]) * 10_000 / Double(row.subscribers)).rounded()) : 0
                out +=
                    [
                        row.cohort, String(age), String(row.subscribers), String(row.active[age]), String(retention),
                        String(row.lifetimeValue[age]), cohorts.currency, age < row.completeAges ? "true" : "false",
                    ].joined(separator: ",") + "\r\n"
            }
        }
        return out
    }

    static func csv(_ rates: AnalyticsRenewalRates) -> String {
        var out = "period,due,renewed,rate_basis_points\r\n"
        for line in rates.lines { out += "\(line.period),\(line.due),\(line.renewed),\(line.rate)\r\n" }
        return out
    }

    static func csv(_ contributors: [AnalyticsStore.Contributor]) -> String {
        var out = "original_transaction_id,user_id,metric,value,app,store,product_id,storefront,offer,currency\r\n"
        for c in contributors {
            out +=
                [
                    c.originalTransactionId, c.userId ?? "", c.metric.name, String(c.value), c.dimensions.app, c.dimensions.store.apiName,
                    c.dimensions.productId, c.dimensions.storefront, c.dimensions.offer, c.dimensions.currency,
                ].map(CSVField.escape).joined(separator: ",") + "\r\n"
        }
        return out
    }
}

/// A CSV field: quoted when it must be, and a leading `=`, `+`, `-` or `@` neutralised so a spreadsheet never runs it.
enum CSVField {
    static func escape(_ text: String) -> String {
        var value = text
        if let first = value.first, "=+-@".contains(first) { value = "'" + value }
        guard value.contains(where: { ",\"\n\r".contains($0) }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
