import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperCore
import Testing

@testable import StorekeeperServer

/// `/v1/admin/analytics/...` over real sockets: money in the reporting currency with the operator's exchange rates
/// (a currency without one named and left out), one currency unconverted, breakdowns, the previous range, CSV,
/// drill-down, cohorts, renewal rates, refusals that change nothing, and scopes.
@Suite("Analytics API")
struct AnalyticsAPITests {
    static let readerKey = "analytics-reader-0123456789ab"

    static let consoleSecret = "owner-secret-0123456789abcdef"

    @Test("exchange rates, breakdowns, comparison, CSV, drill-down, cohorts, renewal rates and refusals", arguments: TestDatabase.available)
    func analyticsAPI(database: TestDatabase) async throws {
        try await ServerHarness.run(
            database,
            environment: .production,
            configure: {
                $0.auth.adminKeys["reader"] = Self.readerKey
                $0.auth.adminKeyScopes["reader"] = [.reportsRead]
                $0.console = ConsoleConfiguration(operators: [.init(name: "owner", role: .viewer, secret: Self.consoleSecret)])
            }
        ) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let start = await server.simulatedNow
            var originals: [String: String] = [:]
            for (user, storefront) in [("usa", "USA"), ("chn", "CHN")] {
                let account = try await store.createAccount(storefront: storefront).id
                let order = try await server.call(
                    .POST,
                    "/v1/orders",
                    json: ["productId": PurchaseFlowTests.standard],
                    headers: ServerHarness.userHeaders(user)
                )
                let token = try #require(UUID(uuidString: order["appAccountToken"] as? String ?? ""))
                let bought = try await store.purchase(
                    productId: PurchaseFlowTests.standard,
                    account: account,
                    options: PurchaseOptions(appAccountToken: token)
                )
                originals[user] = bought.transaction.originalTransactionId
            }
            try await server.deliverAndApply()
            for _ in 0..<70 {
                try await store.advance(by: 86_400)
                try await server.deliverAndApply()
            }
            let from = RevenueReportBuilder.day(start)
            let to = RevenueReportBuilder.day(start.addingTimeInterval(70 * 86_400))
            let admin = ServerHarness.adminHeaders
            func chart(_ query: String, headers: [(String, String)] = admin) async throws -> ServerHarness.Reply {
                try await server.call(.GET, "/v1/admin/analytics/charts/\(query)", headers: headers)
            }
            func lastValue(_ reply: ServerHarness.Reply, series: Int = 0) -> Int64? {
                let chart = reply["chart"] as? [String: Any]
                let list = chart?["series"] as? [[String: Any]]
                guard let series = list?.dropFirst(series).first, let points = series["points"] as? [[String: Any]] else { return nil }
                return (points.last?["value"] as? NSNumber)?.int64Value
            }
            // Without a rate, the yuan subscriber is left out of USD and named.
            let unconverted = try await chart("mrr?from=\(from)&to=\(to)")
            #expect(unconverted.status == 200, "\(unconverted.text.prefix(300))")
            #expect((unconverted["chart"] as? [String: Any])?["missingRates"] as? [String] == ["CNY"])
            #expect(lastValue(unconverted) == 9_990)
            // In CNY alone, unconverted.
            let yuan = try await chart("mrr?from=\(from)&to=\(to)&currency=CNY")
            #expect(lastValue(yuan) == 9_990 && (yuan["chart"] as? [String: Any])?["currency"] as? String == "CNY")
            // A rate: 1 CNY = 0.138 USD from the first day.
            let kept = try await server.call(
                .PUT,
                "/v1/admin/analytics/exchange-rates",
                json: ["rates": [["day": from, "currency": "CNY", "micros": 138_000]]],
                headers: admin
            )
            #expect(kept.status == 200 && kept["kept"] as? Int == 1, "\(kept.text)")
            let converted = try await chart("mrr?from=\(from)&to=\(to)")
            // 9.99 CNY is 1.37862 USD: 1.379 to the milliunit.
            let both: Int64 = 9_990 + 1_379
            #expect(lastValue(converted) == both)
            #expect(((converted["chart"] as? [String: Any])?["missingRates"] as? [String])?.isEmpty == true)
            let arr = try await chart("arr?from=\(from)&to=\(to)")
            #expect(lastValue(arr) == both * 12)
            // Bad rates: refused, naming the entry; nothing kept.
            for (rate, reason) in [
                (["day": from, "currency": "USD", "micros": 1], "the reporting currency"),
                (["day": from, "currency": "CNY", "micros": 0], "micros"),
                (["day": "2026-02-30", "currency": "CNY", "micros": 1], "not a date"),
            ] as [([String: Any], String)] {
                let refused = try await server.call(
                    .PUT,
                    "/v1/admin/analytics/exchange-rates",
                    json: ["rates": [["day": from, "currency": "EUR", "micros": 1_080_000], rate]],
                    headers: admin
                )
                #expect(refused.status == 400, "\(reason): \(refused.text)")
                #expect(refused.code == "invalid_rate" || refused.code == "invalid_request", "\(reason): \(refused.text)")
            }
            let rates = try await server.call(.GET, "/v1/admin/analytics/exchange-rates?from=\(from)&to=\(to)", headers: admin)
            #expect((rates["rates"] as? [[String: Any]])?.count == 1, "only the good rate is kept: \(rates.text)")
            // By storefront, and against the range before.
            let byStorefront = try await chart("active_subscriptions?from=\(from)&to=\(to)&by=storefront&compare=true&interval=week")
            let series = (byStorefront["chart"] as? [String: Any])?["series"] as? [[String: Any]] ?? []
            #expect(series.compactMap { $0["name"] as? String } == ["CHN", "USA"])
            let previous = byStorefront["previous"] as? [String: Any]
            #expect((previous?["series"] as? [[String: Any]]).map { !$0.isEmpty } == true, "\(byStorefront.text.prefix(400))")
            // CSV: one row per point, money in milliunits.
            let csv = try await server.call(
                .GET,
                "/v1/admin/analytics/charts/revenue?from=\(from)&to=\(to)&interval=month",
                headers: admin + [("Accept", "text/csv")]
            )
            let lines = csv.text.split(separator: "\r\n")
            #expect(lines.first == "metric,series,period,value,unit,currency,comparison")
            #expect(lines.contains { $0.hasPrefix("revenue,gross,") && $0.hasSuffix(",milliunits,USD,current") })
            // The subscriptions behind the first day's new subscriptions.
            let behind = try await server.call(.GET, "/v1/admin/analytics/contributors?metric=new_subscriptions&day=\(from)", headers: admin)
            let contributors = behind["subscriptions"] as? [[String: Any]] ?? []
            #expect(Set(contributors.compactMap { $0["originalTransactionId"] as? String }) == Set(originals.values), "\(behind.text)")
            #expect(Set(contributors.compactMap { $0["userId"] as? String }) == ["usa", "chn"])
            // Cohorts and renewal rates.
            let month = String(from.prefix(7))
            let next = String(RevenueReportBuilder.day(SubscriptionRollup.adding(months: 3, to: start)).prefix(7))
            let cohorts = try await server.call(.GET, "/v1/admin/analytics/cohorts?from=\(month)&to=\(next)", headers: admin)
            let rows = cohorts["cohorts"] as? [[String: Any]] ?? []
            #expect(rows.reduce(0) { $0 + ((($1["subscribers"] as? NSNumber)?.intValue) ?? 0) } == 2, "\(cohorts.text.prefix(400))")
            let renewals = try await server.call(.GET, "/v1/admin/analytics/renewal-rates?from=\(from)&to=\(to)", headers: admin)
            let first = (renewals["lines"] as? [[String: Any]])?.first
            #expect((first?["period"] as? Int) == 1 && (first?["due"] as? Int) == 2 && (first?["renewed"] as? Int) == 2, "\(renewals.text)")
            // Refusals.
            let backwards = try await chart("mrr?from=\(to)&to=\(from)")
            #expect(backwards.status == 400 && backwards.code == "invalid_range")
            let tooLong = try await chart("mrr?from=2020-01-01&to=2026-01-01")
            #expect(tooLong.status == 400 && tooLong.code == "invalid_range")
            #expect(try await chart("gross_margin?from=\(from)&to=\(to)").status == 400)
            #expect(try await server.call(.GET, "/v1/admin/analytics/contributors?metric=mrr&day=2026-13-01", headers: admin).status == 400)
            // A key that reads reports reads the analytics, and cannot change the rates or rebuild.
            let reader = [("X-Admin-Key", Self.readerKey)]
            #expect(try await chart("mrr?from=\(from)&to=\(to)", headers: reader).status == 200)
            let write = try await server.call(
                .PUT,
                "/v1/admin/analytics/exchange-rates",
                json: ["rates": [["day": from, "currency": "CNY", "micros": 1]]],
                headers: reader
            )
            #expect(write.status == 403 && write.code == "insufficient_scope")
            #expect(try await server.call(.POST, "/v1/admin/analytics/rebuild", headers: reader).status == 403)
            #expect(lastValue(try await chart("mrr?from=\(from)&to=\(to)")) == both, "the refused rate changed nothing")
            let rebuilt = try await server.call(.POST, "/v1/admin/analytics/rebuild", headers: admin)
            #expect(rebuilt.status == 200 && rebuilt["subscriptions"] as? Int == 2, "\(rebuilt.text)")
            #expect(lastValue(try await chart("mrr?from=\(from)&to=\(to)")) == both)

            // The console's overview reads its active subscriptions from the rollups too: both are in force today.
            let browser = ConsoleBrowser(base: server.serverURL)
            let overview: ConsoleBrowser.Page
            do {
                _ = try await browser.signIn("owner", Self.consoleSecret)
                overview = try await browser.get("/admin")
            } catch {
                try? await browser.shutdown()
                throw error
            }
            try await browser.shutdown()
            #expect(
                overview.text.contains(#"<span class="label">Active subscriptions</span><span class="value">2</span>"#),
                "\(overview.text.prefix(2_000))"
            )
        }
    }
}
