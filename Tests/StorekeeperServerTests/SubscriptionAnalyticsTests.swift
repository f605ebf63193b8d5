import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperCore
import StorekeeperServer
import Testing

/// `GET /v1/admin/reports/subscriptions` over a hundred simulated days: a free trial that converts, a voluntary
/// cancellation, a billing failure recovered in grace, and one that billing retry gives up on.
@Suite("Subscription analytics")
struct SubscriptionAnalyticsTests {
    @Test("trials and conversion, renewals, churn of both kinds, recoveries, MRR and cohorts", arguments: TestDatabase.available)
    func hundredDays(database: TestDatabase) async throws {
        try await ServerHarness.run(database, environment: .production) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let start = await server.simulatedNow
            var accounts: [String: String] = [:]
            for (user, product) in [
                ("trialist", PurchaseFlowTests.monthly), ("quitter", PurchaseFlowTests.standard),
                ("flaky", PurchaseFlowTests.standard), ("broke", PurchaseFlowTests.standard),
            ] {
                let (account, token) = try await server.newCustomer(user, product: product)
                accounts[user] = account
                let bought = try await store.purchase(productId: product, account: account, options: PurchaseOptions(appAccountToken: token))
                if user == "quitter" { try await store.setAutoRenew(false, originalTransactionId: bought.transaction.originalTransactionId!) }
            }
            try await store.setBillingFails(true, account: try #require(accounts["flaky"]))
            try await store.setBillingFails(true, account: try #require(accounts["broke"]))
            try await server.deliverAndApply()
            for day in 1...100 {
                try await store.advance(by: 86_400)
                // Three days into grace, the flaky card works again.
                if day == 34 { try await store.setBillingFails(false, account: try #require(accounts["flaky"])) }
                try await server.deliverAndApply()
            }
            let from = RevenueReportBuilder.day(start)
            let to = RevenueReportBuilder.day(start.addingTimeInterval(101 * 86_400))
            let report = try await server.api(ServerHarness.adminHeaders).adminSubscriptionReport(query: .init(from: from, to: to)).ok.body.json
            let monthly = try #require(report.products.first { $0.productId == PurchaseFlowTests.monthly })
            #expect(monthly.newSubscriptions == 1 && monthly.trialStarts == 1 && monthly.trialConversions == 1, "\(monthly)")
            #expect(monthly.renewals >= 3 && monthly.activeAtEnd == 1 && monthly.trialsAtEnd == 0, "\(monthly)")
            let standard = try #require(report.products.first { $0.productId == PurchaseFlowTests.standard })
            #expect(standard.newSubscriptions == 3 && standard.trialStarts == 0, "\(standard)")
            #expect(standard.voluntaryChurn == 1, "the quitter: \(standard)")
            #expect(standard.billingChurn == 1, "the broke card, after 60 days of retry: \(standard)")
            #expect(standard.recoveries == 1 && standard.graceEntered >= 2 && standard.billingFailures >= 2, "\(standard)")
            #expect(standard.activeAtEnd == 1, "only the recovered subscriber: \(standard)")
            let mrr = report.recurring.reduce(Int64(0)) { $0 + $1.monthly }
            #expect(report.recurring.reduce(0) { $0 + $1.subscribers } == 2)
            #expect(mrr > 2 * 9_000 && mrr < 2 * 11_000, "two subscribers at 9.99 a month: \(report.recurring)")
            let cohort = try #require(report.cohorts.first)
            #expect(report.cohorts.reduce(0) { $0 + $1.subscribers } == 4 && cohort.month == String(from.prefix(7)))
            #expect(report.cohorts.reduce(0) { $0 + $1.activeAtEnd } == 2)
            #expect(report.cohorts.reduce(Int64(0)) { $0 + $1.gross } == report.cohorts.reduce(0) { $0 + Int64($1.paidPeriods) } * 9_990)

            let csv = try await server.call(
                .GET,
                "/v1/admin/reports/subscriptions?from=\(from)&to=\(to)",
                headers: ServerHarness.adminHeaders + [("Accept", "text/csv")]
            )
            #expect(csv.text.hasPrefix("product_id,new_subscriptions,renewals,trial_starts,trial_conversions"))
            #expect(csv.text.split(separator: "\n").count == 3)
            let backwards = try await server.call(.GET, "/v1/admin/reports/subscriptions?from=\(to)&to=\(from)", headers: ServerHarness.adminHeaders)
            #expect(backwards.status == 400 && backwards.code == "invalid_range")
        }
    }
}
