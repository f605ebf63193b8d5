import Foundation
import Hummingbird
import NIOCore
import StorekeeperCore
import StorekeeperStorage

/// The console's analytics: a chart of any metric over a chosen range, broken down or compared with the range
/// before, each point opening the subscriptions behind it; the cohort triangle with realized lifetime value;
/// renewal rates; and CSV of each.
extension ConsoleController {
    /// What the page's form chose (the query string), checked.
    struct AnalyticsQuery: Sendable {
        var metric = AnalyticsChartMetric.mrr
        var from: String
        var to: String
        var interval = AnalyticsInterval.day
        var by: AnalyticsStore.Dimension?
        var compare = false
        var filter = AnalyticsStore.Filter()

        /// The query string that reproduces it, with `extra` pairs after.
        func query(_ extra: [(String, String)] = []) -> String {
            var pairs: [(String, String)] = [("metric", metric.rawValue), ("from", from), ("to", to), ("interval", interval.rawValue)]
            if let by { pairs.append(("by", by.rawValue)) }
            if compare { pairs.append(("compare", "on")) }
            if let app = filter.app { pairs.append(("app", app)) }
            if let store = filter.store { pairs.append(("store", store.apiName)) }
            if let product = filter.productId { pairs.append(("product", product)) }
            if let storefront = filter.storefront { pairs.append(("storefront", storefront)) }
            if let offer = filter.offer { pairs.append(("offer", offer)) }
            if let currency = filter.currency { pairs.append(("currency", currency)) }
            return (pairs + extra).map { "\($0.0)=\(Self.encode($0.1))" }.joined(separator: "&")
        }

        static func encode(_ text: String) -> String {
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-._~")
            return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
        }
    }

    /// Reads the form; a value that cannot be used is a 400 naming it.
    static func analyticsQuery(_ request: Request, now: Date) throws -> AnalyticsQuery {
        let today = RevenueReportBuilder.day(now)
        let tomorrow = AnalyticsDays.adding(1, to: today) ?? today
        var query = AnalyticsQuery(from: AnalyticsDays.adding(-89, to: today) ?? today, to: tomorrow)
        func text(_ name: String) -> String? {
            guard let value = formQuery(request, name)?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
            return value
        }
        if let metric = text("metric") {
            guard let known = AnalyticsChartMetric(rawValue: metric) else { throw StorekeeperError.invalidInput("invalid_metric", "unknown metric") }
            query.metric = known
        }
        if let from = text("from") { query.from = from }
        if let to = text("to") { query.to = to }
        let days = try AnalyticsService.checkRange(from: query.from, to: query.to)
        if let interval = text("interval") {
            guard let known = AnalyticsInterval(rawValue: interval) else {
                throw StorekeeperError.invalidInput("invalid_interval", "interval is day, week or month")
            }
            query.interval = known
        } else {
            query.interval = days > 366 ? .month : days > 120 ? .week : .day
        }
        if let by = text("by") {
            guard let known = AnalyticsStore.Dimension(rawValue: by) else { throw StorekeeperError.invalidInput("invalid_by", "unknown breakdown") }
            query.by = known
        }
        query.compare = text("compare") != nil
        for name in ["app", "product", "storefront", "offer", "currency"] {
            if let value = text(name), value.utf8.count > 200 { throw StorekeeperError.invalidInput("invalid_\(name)", "\(name) is too long") }
        }
        if let store = text("store") {
            guard let known = Store.allCases.first(where: { $0.apiName == store }) else {
                throw StorekeeperError.invalidInput("invalid_store", "store is appStore or googlePlay")
            }
            query.filter.store = known
        }
        query.filter.app = text("app")
        query.filter.productId = text("product")
        query.filter.storefront = text("storefront")
        query.filter.offer = text("offer")
        query.filter.currency = text("currency")
        return query
    }

    func analytics(_ request: Request, _ signedIn: Operator) async throws -> Response {
        guard let service = api.analytics else {
            return try problem("Analytics unavailable", .notFound, "Analytics are not configured.", signedIn: signedIn)
        }
        let now = Date()
        let query: AnalyticsQuery
        do {
            query = try Self.analyticsQuery(request, now: now)
        } catch {
            return try problem("Analytics", .badRequest, Self.message(of: error), signedIn: signedIn)
        }
        // The rollups are brought up to date once for the whole page.
        let pending = try await service.catchUp()
        let answer = try await service.chart(
            query.metric,
            from: query.from,
            to: query.to,
            interval: query.interval,
            by: query.by,
            filter: query.filter,
            compare: query.compare,
            caughtUp: pending
        )
        // The headline figures at the range's end.
        var tiles: [[String: Any]] = []
        let lastDay = AnalyticsDays.adding(-1, to: query.to) ?? query.from
        for (metric, chart) in try await service.headline(day: lastDay, filter: query.filter) {
            let value = chart.series.first?.points.last?.value ?? 0
            let money = metric.unit == .milliunits ? " \(chart.currency)" : ""
            tiles.append(["label": metric.title, "value": AnalyticsSVG.label(value, unit: metric.unit) + money, "note": "on \(lastDay)"])
        }
        let svg = AnalyticsSVG.chart(answer.chart, previous: answer.previous) { period in
            "/admin/analytics/contributors?" + query.query([("day", period)])
        }
        // Cohorts: the twelve months up to the range's end.
        let endMonth = String((AnalyticsDays.adding(-1, to: query.to) ?? query.to).prefix(7))
        let endDate = AnalyticsDays.date(endMonth + "-01") ?? now
        let startMonth = String(RevenueReportBuilder.day(SubscriptionRollup.adding(months: -11, to: endDate)).prefix(7))
        let nextMonth = String(RevenueReportBuilder.day(SubscriptionRollup.adding(months: 1, to: endDate)).prefix(7))
        let (cohorts, _) = try await service.cohorts(fromMonth: startMonth, toMonth: nextMonth, filter: query.filter, asOf: now, caughtUp: pending)
        let ltv: [[String: Any]] = cohorts.rows.map { row in
            var values: [String: Any] = ["cohort": row.cohort, "subscribers": String(row.subscribers)]
            for months in [1, 3, 6, 12] {
                values["m\(months)"] = months <= row.completeAges ? AnalyticsSVG.label(row.lifetimeValue[months - 1], unit: .milliunits) : "…"
            }
            return values
        }
        let (renewals, _) = try await service.renewalRates(from: query.from, to: query.to, filter: query.filter, caughtUp: pending)
        let dimensions = try await service.store.dimensionValues()
        func options(_ values: [String], selected: String?) -> [[String: Any]] {
            values.map { ["value": $0, "label": $0.isEmpty ? "(none)" : $0, "selected": $0 == selected] }
        }
        let table: [[String: Any]] = answer.chart.series.flatMap { series in
            series.points.map { point in
                [
                    "series": series.name, "period": point.period, "value": AnalyticsSVG.label(point.value, unit: answer.chart.metric.unit),
                    "link": "/admin/analytics/contributors?" + query.query([("day", point.period)]),
                ]
            }
        }
        let values: [String: Any] = [
            "tiles": tiles,
            "chart": svg,
            "chartTitle": answer.chart.metric.title,
            "currency": answer.chart.currency,
            "missingRates": answer.chart.missingRates.isEmpty ? nil as String? : answer.chart.missingRates.joined(separator: ", "),
            "pending": answer.pending > 0 ? String(answer.pending) : nil as String?,
            "metrics": AnalyticsChartMetric.allCases.map { ["value": $0.rawValue, "label": $0.title, "selected": $0 == query.metric] },
            "intervals": AnalyticsInterval.allCases.map { ["value": $0.rawValue, "selected": $0 == query.interval] },
            "breakdowns": AnalyticsStore.Dimension.allCases.map { ["value": $0.rawValue, "selected": $0 == query.by] },
            "from": query.from,
            "to": query.to,
            "compare": query.compare,
            "apps": options(dimensions[.app] ?? [], selected: query.filter.app),
            "stores": Store.allCases.map { ["value": $0.apiName, "label": $0.apiName, "selected": $0 == query.filter.store] },
            "products": options(dimensions[.product] ?? [], selected: query.filter.productId),
            "storefronts": options(dimensions[.storefront] ?? [], selected: query.filter.storefront),
            "offers": options((dimensions[.offer] ?? []).filter { !$0.isEmpty }, selected: query.filter.offer),
            "currencies": options(dimensions[.currency] ?? [], selected: query.filter.currency),
            "csv": "/admin/analytics.csv?" + query.query(),
            "cohortsCSV": "/admin/analytics/cohorts.csv?" + query.query(),
            "cohorts": AnalyticsSVG.cohortTriangle(cohorts, ages: 12),
            "cohortCurrency": cohorts.currency,
            "ltv": ltv,
            "renewals": renewals.lines.map {
                [
                    "period": String($0.period), "due": String($0.due), "renewed": String($0.renewed),
                    "rate": AnalyticsSVG.label($0.rate, unit: .basisPoints),
                ]
            },
            "points": table,
        ]
        return try render("analytics", title: "Analytics", values, signedIn: signedIn)
    }

    /// The chart's points as CSV (what the page shows, with the previous range when compared).
    func analyticsCSV(_ request: Request, cohorts: Bool) async throws -> Response {
        guard let service = api.analytics else { throw StorekeeperError(.notFound, code: "no_analytics", message: "analytics are not configured") }
        let query = try Self.analyticsQuery(request, now: Date())
        let text: String
        let name: String
        if cohorts {
            let endMonth = String((AnalyticsDays.adding(-1, to: query.to) ?? query.to).prefix(7))
            let endDate = AnalyticsDays.date(endMonth + "-01") ?? Date()
            let next = String(RevenueReportBuilder.day(SubscriptionRollup.adding(months: 1, to: endDate)).prefix(7))
            let start = String(query.from.prefix(7))
            let (rows, _) = try await service.cohorts(fromMonth: start < next ? start : endMonth, toMonth: next, filter: query.filter, asOf: Date())
            text = AnalyticsService.csv(rows)
            name = "cohorts-\(start)-\(endMonth).csv"
        } else {
            let answer = try await service.chart(
                query.metric,
                from: query.from,
                to: query.to,
                interval: query.interval,
                by: query.by,
                filter: query.filter,
                compare: query.compare
            )
            text = AnalyticsService.csv(answer)
            name = "\(query.metric.rawValue)-\(query.from)-\(query.to).csv"
        }
        var headers = Self.securityHeaders
        headers[.contentType] = "text/csv; charset=utf-8"
        headers[.contentDisposition] = "attachment; filename=\"\(name)\""
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The subscriptions behind one point (every day of its bucket), each linked to its customer.
    func analyticsContributors(_ request: Request, _ signedIn: Operator) async throws -> Response {
        guard let service = api.analytics else {
            return try problem("Analytics unavailable", .notFound, "Analytics are not configured.", signedIn: signedIn)
        }
        let query: AnalyticsQuery
        let day: String
        do {
            query = try Self.analyticsQuery(request, now: Date())
            guard let named = Self.formQuery(request, "day"), AnalyticsDays.date(named) != nil else {
                throw StorekeeperError.invalidInput("invalid_day", "day must be a date (YYYY-MM-DD)")
            }
            day = named
        } catch {
            return try problem("Analytics", .badRequest, Self.message(of: error), signedIn: signedIn)
        }
        // A week's or month's point: each of its days, up to the range's end.
        var days = [day]
        let bucketEnd: String? =
            switch query.interval {
            case .day: nil
            case .week: AnalyticsDays.adding(7, to: day)
            case .month: AnalyticsDays.date(day).map { RevenueReportBuilder.day(SubscriptionRollup.adding(months: 1, to: $0)) }
            }
        if let bucketEnd { days = AnalyticsDays.range(from: day, to: min(bucketEnd, query.to)) }
        var rows: [[String: Any]] = []
        for one in days.prefix(31) where rows.count < 500 {
            for contributor in try await service.contributors(query.metric, day: one, filter: query.filter, limit: 500 - rows.count) {
                let unit: AnalyticsChartMetric.Unit = contributor.metric.isMoney ? .milliunits : .count
                rows.append([
                    "day": one, "original": contributor.originalTransactionId, "user": contributor.userId ?? "",
                    "metric": contributor.metric.name,
                    "value": AnalyticsSVG.label(contributor.value, unit: unit)
                        + (contributor.metric.isMoney ? " \(contributor.dimensions.currency)" : ""),
                    "product": contributor.dimensions.productId, "storefront": contributor.dimensions.storefront,
                    "offer": contributor.dimensions.offer, "store": contributor.dimensions.store.apiName,
                ])
            }
        }
        let values: [String: Any] = [
            "metric": query.metric.title, "day": day, "through": days.last ?? day, "rows": rows, "back": "/admin/analytics?" + query.query(),
            "truncated": rows.count >= 500,
        ]
        return try render("contributors", title: "Behind the point", values, signedIn: signedIn)
    }
}
