import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperCore
import StorekeeperServer
import Testing

/// The analytics' charts against the simulator's own figures over a simulated year: subscribers joining for six
/// months in two storefronts and currencies, on monthly plans with and without a free trial and on a yearly plan;
/// cancelling, resubscribing, failing to pay (some recover in grace or in billing retry, some never), upgrading,
/// and refunded. Every day of every count and money metric (per currency) must equal what the simulator computes
/// from its own transactions and expiries — by a different method (each day counted directly).
@Suite("Subscription analytics against ground truth")
struct SubscriptionAnalyticsTruthTests {
    static let subscribers = 90

    /// What one subscriber does, decided by a seeded generator so a failure reproduces.
    struct Plan {
        var user: String
        var storefront: String
        var product: String
        var joinDay: Int
        var cancelDay: Int?
        var resubscribeDay: Int?
        var failDay: Int?
        var recoverDay: Int?
        var refundDay: Int?
        var upgradeDay: Int?
    }

    static func plans(seed: UInt64) -> [Plan] {
        var rng = SplitMix(seed: seed)
        return (0..<subscribers).map { index in
            let product =
                switch rng.next() % 10 {
                case 0...4: PurchaseFlowTests.monthly
                case 5...7: PurchaseFlowTests.standard
                default: PurchaseFlowTests.yearly
                }
            var plan = Plan(
                user: "analytics-\(index)",
                storefront: rng.next() % 3 == 0 ? "CHN" : "USA",
                product: product,
                joinDay: Int(rng.next() % 180)
            )
            switch rng.next() % 10 {
            case 0...2:
                plan.cancelDay = plan.joinDay + 3 + Int(rng.next() % 120)
                if rng.next() % 2 == 0 { plan.resubscribeDay = plan.cancelDay! + 40 + Int(rng.next() % 60) }
            case 3...4:
                plan.failDay = plan.joinDay + 20 + Int(rng.next() % 100)
                // Some recover within grace, some in billing retry, the rest never (retry gives up after 60 days).
                switch rng.next() % 3 {
                case 0: plan.recoverDay = plan.failDay! + 40 + Int(rng.next() % 6)
                case 1: plan.recoverDay = plan.failDay! + 50 + Int(rng.next() % 40)
                default: break
                }
            case 5: plan.refundDay = plan.joinDay + 10 + Int(rng.next() % 150)
            case 6 where product != PurchaseFlowTests.yearly: plan.upgradeDay = plan.joinDay + 10 + Int(rng.next() % 100)
            default: break
            }
            return plan
        }
    }

    @Test("a simulated year: every metric, every day, equals the simulator's figures", arguments: TestDatabase.available)
    func year(database: TestDatabase) async throws {
        try await ServerHarness.run(database, environment: .production) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let start = await server.simulatedNow
            let plans = Self.plans(seed: 20_261_127)
            var accounts: [String: (account: String, token: UUID)] = [:]
            for day in 0..<365 {
                for plan in plans {
                    if plan.joinDay == day {
                        let account = try await store.createAccount(storefront: plan.storefront).id
                        let order = try await server.call(
                            .POST,
                            "/v1/orders",
                            json: ["productId": plan.product],
                            headers: ServerHarness.userHeaders(plan.user)
                        )
                        let token = try #require(UUID(uuidString: order["appAccountToken"] as? String ?? ""))
                        accounts[plan.user] = (account, token)
                        _ = try await store.purchase(productId: plan.product, account: account, options: PurchaseOptions(appAccountToken: token))
                    }
                    guard let (account, token) = accounts[plan.user] else { continue }
                    let actions = [plan.cancelDay, plan.resubscribeDay, plan.failDay, plan.recoverDay, plan.refundDay, plan.upgradeDay]
                    guard actions.contains(day) else { continue }
                    let originals = await store.transactions(account: account).compactMap(\.originalTransactionId)
                    guard let original = originals.first else { continue }
                    if plan.cancelDay == day { try? await store.setAutoRenew(false, originalTransactionId: original) }
                    if plan.resubscribeDay == day {
                        _ = try? await store.purchase(productId: plan.product, account: account, options: PurchaseOptions(appAccountToken: token))
                    }
                    if plan.failDay == day { try await store.setBillingFails(true, account: account) }
                    if plan.recoverDay == day { try await store.setBillingFails(false, account: account) }
                    if plan.refundDay == day, let latest = await store.transactions(account: account).last?.transactionId {
                        try? await store.decideRefund(transactionId: latest, approve: true)
                    }
                    if plan.upgradeDay == day {
                        _ = try? await store.purchase(
                            productId: PurchaseFlowTests.yearly,
                            account: account,
                            options: PurchaseOptions(appAccountToken: token)
                        )
                    }
                }
                try await server.deliverAndApply()
                try await store.advance(by: 86_400)
            }
            try await server.deliverAndApply()
            let end = start.addingTimeInterval(365 * 86_400)
            let truth = await store.analyticsTruth(from: start, to: end)
            let from = RevenueReportBuilder.day(start)
            let to = RevenueReportBuilder.day(end)
            let api = try server.api(ServerHarness.adminHeaders)
            func chart(
                _ metric: Operations.AdminAnalyticsChart.Input.Path.MetricPayload,
                currency: String? = nil
            ) async throws
                -> Components.Schemas.AnalyticsChart
            {
                try await api.adminAnalyticsChart(path: .init(metric: metric), query: .init(from: from, to: to, currency: currency)).ok.body.json
                    .chart
            }
            var compared = 0
            var mismatches: [String] = []
            func compare(_ series: Components.Schemas.AnalyticsChart.SeriesPayloadPayload?, _ key: String) {
                let points = series?.points ?? []
                #expect(points.count == 365, "\(key): \(points.count) points")
                for point in points {
                    compared += 1
                    let expected = truth.value(key, on: point.period)
                    if point.value != expected { mismatches.append("\(key) on \(point.period): server \(point.value), truth \(expected)") }
                }
            }
            let counts: [(Operations.AdminAnalyticsChart.Input.Path.MetricPayload, String)] = [
                (.activeSubscriptions, "active"), (.activeTrials, "trials"), (.newSubscriptions, "new"), (.reactivations, "reactivation"),
                (.renewals, "renewal"), (.trialStarts, "trial_start"), (.trialConversions, "conversion"), (.refunds, "refunds"),
            ]
            for (metric, key) in counts { compare(try await chart(metric).series.first, key) }
            let churn = try await chart(.churn)
            compare(churn.series.first { $0.name == "voluntary" }, "churn_voluntary")
            compare(churn.series.first { $0.name == "involuntary" }, "churn_involuntary")
            for currency in ["USD", "CNY"] {
                compare(try await chart(.mrr, currency: currency).series.first, "mrr|\(currency)")
                let revenue = try await chart(.revenue, currency: currency)
                compare(revenue.series.first { $0.name == "gross" }, "revenue|\(currency)")
                compare(revenue.series.first { $0.name == "refunded" }, "refunded|\(currency)")
            }
            #expect(compared == 16 * 365, "every chart has a point a day")
            #expect(mismatches.isEmpty, "\(mismatches.count) of \(compared) points differ: \(mismatches.prefix(20))")
            // The scenario exercised what it claims to.
            let totals = truth.days.values.reduce(into: [String: Int64]()) { totals, day in
                for (key, value) in day { totals[key, default: 0] += value }
            }
            for key in ["new", "reactivation", "renewal", "trial_start", "conversion", "refunds", "churn_voluntary", "churn_involuntary"] {
                #expect((totals[key] ?? 0) > 0, "the year has \(key): \(totals)")
            }
            #expect((totals["mrr|CNY"] ?? 0) > 0 && (totals["mrr|USD"] ?? 0) > 0)
            print("analytics truth, the year's totals: \(totals.sorted { $0.key < $1.key })")

            // Cohorts: sizes and retention month by month.
            let cohorts = try await api.adminAnalyticsCohorts(query: .init(from: String(from.prefix(7)), to: String(to.prefix(7)) + "")).ok.body.json
            for row in cohorts.cohorts {
                #expect(row.subscribers == truth.cohortSubscribers[row.cohort], "cohort \(row.cohort) size")
                #expect(
                    row.active == truth.cohortActive[row.cohort],
                    "cohort \(row.cohort) retention: \(row.active) vs \(truth.cohortActive[row.cohort] ?? [])"
                )
            }
            #expect(Set(cohorts.cohorts.map(\.cohort)).isSuperset(of: truth.cohortSubscribers.keys.filter { $0 < String(to.prefix(7)) }))

            // A rebuild from the ledger's records gives the same figures.
            let before = try await chart(.activeSubscriptions)
            let rebuilt = try await api.adminRebuildAnalytics().ok.body.json
            #expect(rebuilt.subscriptions >= Self.subscribers)
            #expect(try await chart(.activeSubscriptions) == before)
        }
    }
}

/// A small seeded generator (SplitMix64), so the scenario is the same on every run.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
