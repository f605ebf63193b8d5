import Foundation
import OpenAPIRuntime
import StorekeeperAPI
import StorekeeperCore
import StorekeeperServerAPI
import StorekeeperStorage

/// `/v1/admin/analytics/...`: the subscription analytics' charts, cohorts, renewal rates, drill-down and exchange
/// rates.
extension APIHandler {
    private func analyticsService() throws -> AnalyticsService {
        guard let analytics else {
            throw StorekeeperError(.internal, code: "no_analytics", message: "subscription analytics are not configured")
        }
        return analytics
    }

    /// The filter the query names (`store` in the API's spelling).
    static func analyticsFilter(
        app: String?,
        store: String?,
        product: String?,
        storefront: String?,
        offer: String?,
        currency: String?
    ) -> AnalyticsStore.Filter {
        AnalyticsStore.Filter(
            app: app,
            store: store.flatMap { name in Store.allCases.first { $0.apiName == name } },
            productId: product,
            storefront: storefront,
            offer: offer,
            currency: currency
        )
    }

    static func wantsCSV<T>(_ accept: [AcceptHeaderContentType<T>], csv: T) -> Bool where T: AcceptableProtocol {
        accept.sorted { $0.quality.doubleValue > $1.quality.doubleValue }.first?.contentType == csv
    }

    func adminAnalyticsChart(_ input: Operations.AdminAnalyticsChart.Input) async throws -> Operations.AdminAnalyticsChart.Output {
        guard let metric = AnalyticsChartMetric(rawValue: input.path.metric.rawValue) else {
            throw StorekeeperError.invalidInput("invalid_metric", "unknown metric \(input.path.metric.rawValue)")
        }
        let q = input.query
        let answer = try await analyticsService().chart(
            metric,
            from: q.from,
            to: q.to,
            interval: AnalyticsInterval(rawValue: q.interval?.rawValue ?? "day") ?? .day,
            by: q.by.flatMap { AnalyticsStore.Dimension(rawValue: $0.rawValue) },
            filter: Self.analyticsFilter(
                app: q.app,
                store: q.store?.rawValue,
                product: q.product,
                storefront: q.storefront,
                offer: q.offer,
                currency: q.currency
            ),
            compare: q.compare ?? false
        )
        if Self.wantsCSV(input.headers.accept, csv: .csv) { return .ok(.init(body: .csv(HTTPBody(AnalyticsService.csv(answer))))) }
        return .ok(.init(body: .json(.init(chart: Self.schema(answer.chart), previous: answer.previous.map(Self.schema), pending: answer.pending))))
    }

    static func schema(_ chart: AnalyticsChart) -> Components.Schemas.AnalyticsChart {
        .init(
            metric: chart.metric.rawValue,
            interval: .init(rawValue: chart.interval.rawValue) ?? .day,
            from: chart.from,
            to: chart.to,
            unit: .init(rawValue: chart.metric.unit.rawValue) ?? .count,
            currency: chart.currency,
            series: chart.series.map { series in
                .init(name: series.name, points: series.points.map { .init(period: $0.period, value: $0.value) })
            },
            missingRates: chart.missingRates
        )
    }

    func adminAnalyticsCohorts(_ input: Operations.AdminAnalyticsCohorts.Input) async throws -> Operations.AdminAnalyticsCohorts.Output {
        let q = input.query
        let (cohorts, pending) = try await analyticsService().cohorts(
            fromMonth: q.from,
            toMonth: q.to,
            filter: Self.analyticsFilter(
                app: q.app,
                store: q.store?.rawValue,
                product: q.product,
                storefront: q.storefront,
                offer: q.offer,
                currency: q.currency
            ),
            asOf: Date()
        )
        if Self.wantsCSV(input.headers.accept, csv: .csv) { return .ok(.init(body: .csv(HTTPBody(AnalyticsService.csv(cohorts))))) }
        return .ok(
            .init(
                body: .json(
                    .init(
                        currency: cohorts.currency,
                        pending: pending,
                        missingRates: cohorts.missingRates,
                        cohorts: cohorts.rows.map {
                            .init(
                                cohort: $0.cohort,
                                subscribers: $0.subscribers,
                                active: $0.active,
                                lifetimeValue: $0.lifetimeValue,
                                completeAges: $0.completeAges
                            )
                        }
                    )
                )
            )
        )
    }

    func adminAnalyticsRenewalRates(
        _ input: Operations.AdminAnalyticsRenewalRates.Input
    ) async throws -> Operations.AdminAnalyticsRenewalRates.Output {
        let q = input.query
        let (rates, pending) = try await analyticsService().renewalRates(
            from: q.from,
            to: q.to,
            filter: Self.analyticsFilter(
                app: q.app,
                store: q.store?.rawValue,
                product: q.product,
                storefront: q.storefront,
                offer: q.offer,
                currency: q.currency
            )
        )
        if Self.wantsCSV(input.headers.accept, csv: .csv) { return .ok(.init(body: .csv(HTTPBody(AnalyticsService.csv(rates))))) }
        return .ok(
            .init(
                body: .json(
                    .init(
                        pending: pending,
                        lines: rates.lines.map { .init(period: $0.period, due: $0.due, renewed: $0.renewed, rate: $0.rate) }
                    )
                )
            )
        )
    }

    func adminAnalyticsContributors(
        _ input: Operations.AdminAnalyticsContributors.Input
    ) async throws -> Operations.AdminAnalyticsContributors.Output {
        let q = input.query
        guard let metric = AnalyticsChartMetric(rawValue: q.metric.rawValue) else {
            throw StorekeeperError.invalidInput("invalid_metric", "unknown metric \(q.metric.rawValue)")
        }
        let limit = try Self.bounded(q.limit, name: "limit", in: 1...1_000, default: 200)
        let contributors = try await analyticsService().contributors(
            metric,
            day: q.day,
            filter: Self.analyticsFilter(
                app: q.app,
                store: q.store?.rawValue,
                product: q.product,
                storefront: q.storefront,
                offer: q.offer,
                currency: q.currency
            ),
            limit: limit
        )
        if Self.wantsCSV(input.headers.accept, csv: .csv) {
            return .ok(.init(body: .csv(HTTPBody(AnalyticsService.csv(contributors)))))
        }
        return .ok(
            .init(
                body: .json(
                    .init(
                        subscriptions: contributors.map {
                            .init(
                                originalTransactionId: $0.originalTransactionId,
                                userId: $0.userId,
                                metric: $0.metric.name,
                                value: $0.value,
                                app: $0.dimensions.app,
                                store: $0.dimensions.store.apiName,
                                productId: $0.dimensions.productId,
                                storefront: $0.dimensions.storefront,
                                offer: $0.dimensions.offer,
                                currency: $0.dimensions.currency
                            )
                        }
                    )
                )
            )
        )
    }

    func adminAnalyticsExchangeRates(
        _ input: Operations.AdminAnalyticsExchangeRates.Input
    ) async throws -> Operations.AdminAnalyticsExchangeRates.Output {
        let service = try analyticsService()
        _ = try AnalyticsService.checkRange(from: input.query.from, to: input.query.to)
        let rates = try await service.store.exchangeRates(
            reportingCurrency: service.reportingCurrency,
            fromDay: input.query.from,
            toDay: input.query.to
        )
        return .ok(
            .init(
                body: .json(
                    .init(
                        reportingCurrency: service.reportingCurrency,
                        rates: rates.all.map { .init(day: $0.day, currency: $0.currency, micros: $0.micros) }
                    )
                )
            )
        )
    }

    func adminSetAnalyticsExchangeRates(
        _ input: Operations.AdminSetAnalyticsExchangeRates.Input
    ) async throws -> Operations.AdminSetAnalyticsExchangeRates.Output {
        let service = try analyticsService()
        guard case .json(let body) = input.body else { throw StorekeeperError.invalidInput("invalid_body", "expected JSON") }
        guard body.rates.count <= 10_000 else { throw StorekeeperError.invalidInput("invalid_rate", "at most 10000 rates a request") }
        var rates: [(day: String, currency: String, micros: Int64)] = []
        for (index, rate) in body.rates.enumerated() {
            guard AnalyticsDays.date(rate.day) != nil else {
                throw StorekeeperError.invalidInput("invalid_rate", "rates[\(index)].day is not a date (YYYY-MM-DD)")
            }
            guard rate.currency.utf8.count == 3, rate.currency.allSatisfy({ $0.isASCII && $0.isUppercase }) else {
                throw StorekeeperError.invalidInput("invalid_rate", "rates[\(index)].currency is not an ISO 4217 code")
            }
            guard rate.currency != service.reportingCurrency else {
                throw StorekeeperError.invalidInput("invalid_rate", "rates[\(index)].currency is the reporting currency")
            }
            guard (1...1_000_000_000_000).contains(rate.micros) else {
                throw StorekeeperError.invalidInput("invalid_rate", "rates[\(index)].micros must be in 1...1000000000000")
            }
            rates.append((rate.day, rate.currency, rate.micros))
        }
        try await service.store.setExchangeRates(rates)
        return .ok(.init(body: .json(.init(kept: rates.count))))
    }

    func adminRebuildAnalytics(_ input: Operations.AdminRebuildAnalytics.Input) async throws -> Operations.AdminRebuildAnalytics.Output {
        let rolled = try await analyticsService().store.rebuild()
        return .ok(.init(body: .json(.init(subscriptions: rolled))))
    }
}
