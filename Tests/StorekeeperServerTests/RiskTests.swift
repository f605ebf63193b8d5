import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import SQLKit
import StorekeeperAPI
import StorekeeperCore
import StorekeeperServer
import StorekeeperStorage
import Testing

/// Issue 17's risk signals (seed 003's refund abuse): refunds, their amount and coins refunded after being spent,
/// on the customer page and the "customers to review" list, in the metrics, and the policy that answers Apple's
/// refund questions about such a customer with DECLINE, audited with its reason.
@Suite("Risk signals")
struct RiskTests {
    @Test(
        "a customer who refunds after spending is flagged, listed, counted, and their next refund question is declined",
        arguments: TestDatabase.available
    )
    func refundAbuse(database: TestDatabase) async throws {
        try await ServerHarness.run(
            database,
            environment: .production,
            configure: {
                ConsoleTests.configure(&$0)
                $0.lifecycle.customerConsented = true
                $0.risk = RiskPolicy(refundsToReview: 2, refundRatePermille: 300, mergedGuestsToReview: 3, declineRefundsFrom: 2)
            }
        ) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let account = try await store.createAccount().id
            var bought: [String] = []
            for _ in 0..<3 {
                let (orderId, purchase) = try await server.orderAndBuy(PurchaseFlowTests.coins, user: "rex", account: account)
                #expect(
                    try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders("rex"), orderId: orderId).status == 200
                )
                bought.append(try #require(purchase.transaction.transactionId))
            }
            try await server.deliverAndApply()
            // Spend most of the coins, then have Apple refund two purchases: one can no longer be taken back in full.
            let spent = try await server.call(
                .POST,
                "/v1/wallet/spend",
                json: ["amount": 150, "idempotencyKey": "spree"],
                headers: ServerHarness.userHeaders("rex")
            )
            #expect(spent.status == 200, "\(spent.text)")
            for id in bought.prefix(2) {
                try await store.decideRefund(transactionId: id, approve: true)
                try await server.deliverAndApply()
            }
            // An honest customer for contrast.
            let other = try await store.createAccount().id
            let (orderId, purchase) = try await server.orderAndBuy(PurchaseFlowTests.coins, user: "ned", account: other)
            #expect(try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders("ned"), orderId: orderId).status == 200)

            // The third purchase's refund question: the policy answers DECLINE and says why.
            try await store.requestRefund(transactionId: bought[2], reason: .unsatisfiedWithPurchase)
            try await server.deliverAndApply()
            #expect(try await server.runJob("consumption-responder", now: await server.simulatedNow + 600) == 1)
            let sent = try #require(await store.consumptionInformation(transactionId: bought[2]))
            #expect(sent.refundPreference == .decline)
            let answered = try #require(try await server.audit("rex").last { $0.action == "refund.consumption_answered" })
            #expect(answered.detail?.contains("risk.declineRefundsFrom is 2") == true, "\(answered.detail ?? "")")

            // Listed for review with its signals; the honest customer is not.
            _ = try await server.runJob("business-metrics")
            let metrics = MonitoringTests.Exposition(try await server.call(.GET, "/metrics").text)
            #expect(metrics.value("storekeeper_customers_to_review", ["signal": "all"]) == 1)
            #expect(metrics.value("storekeeper_customers_to_review", ["signal": "refunds"]) == 1)
            #expect(metrics.value("storekeeper_customers_to_review", ["signal": "refunded_after_spending"]) == 1)
            let browser = ConsoleBrowser(base: server.serverURL)
            do {
                #expect(try await browser.signIn("vera", ConsoleTests.operators[0].2).status == 303)
                let review = try await browser.get("/admin/review")
                #expect(
                    review.status == 200 && review.text.contains("href=\"/admin/customers/rex\"") && !review.text.contains("/admin/customers/ned")
                )
                #expect(review.text.contains("refunds, refunded_after_spending"), "\(review.text)")
                let customer = try await browser.get("/admin/customers/rex")
                #expect(customer.text.contains("data-flag=\"refunds\"") && customer.text.contains("data-flag=\"refunded_after_spending\""))
                // The refund in the timeline links to Apple's notification as received.
                let link = try #require(customer.text.range(of: "href=\"/admin/notifications/")).upperBound
                let id = String(customer.text[link...].prefix { $0 != "\"" })
                let notification = try await browser.get("/admin/notifications/\(id)")
                #expect(notification.status == 200 && notification.text.contains("Body as received") && notification.text.contains("signedPayload"))
                let honest = try await browser.get("/admin/customers/ned")
                #expect(honest.text.contains("Nothing over the policy"))
            } catch {
                try? await browser.shutdown()
                throw error
            }
            try await browser.shutdown()

            // Later counts read only what happened since (issue 30 item 16): ned now spends and is refunded, and
            // rex's debt is paid off by an operator; the next count has ned and still rex (his refunds stay).
            let nedSpent = try await server.call(
                .POST,
                "/v1/wallet/spend",
                json: ["amount": 50, "idempotencyKey": "ned-spree"],
                headers: ServerHarness.userHeaders("ned")
            )
            #expect(nedSpent.status == 200, "\(nedSpent.text)")
            try await store.decideRefund(transactionId: try #require(purchase.transaction.transactionId), approve: true)
            try await server.deliverAndApply()
            let later = await server.simulatedNow.addingTimeInterval(301)
            _ = try await server.runJob("business-metrics", now: later)
            let counted = MonitoringTests.Exposition(try await server.call(.GET, "/metrics").text)
            #expect(counted.value("storekeeper_customers_to_review", ["signal": "all"]) == 2)
            #expect(counted.value("storekeeper_customers_to_review", ["signal": "refunded_after_spending"]) == 2)
            #expect(counted.value("storekeeper_customers_to_review", ["signal": "refunds"]) == 1)
        }
    }

    @Test("a review reads on its own connection: it never waits for the writer", arguments: [TestDatabase.sqlite])
    func reviewBesideTheWriter(database: TestDatabase) async throws {
        try await ServerHarness.withDatabase(database) { configuration in
            guard case .sqlite(let path) = configuration else { return }
            let provider = try await SQLiteDatabaseProvider(location: .file(path))
            _ = try await Migrator(migrations: StorekeeperSchema.migrations, logger: ServerHarness.quietLogger("migrate")).migrate(provider)
            let risk = RiskStore(provider: provider)
            let held = AsyncStream<Void>.makeStream()
            let release = AsyncStream<Void>.makeStream()
            let finished = try await withThrowingTaskGroup(of: Bool.self) { tasks in
                // The writer, busy (a long report or a stalled batch would hold it the same way).
                tasks.addTask {
                    try await provider.withSession { db in
                        try await db.raw("BEGIN IMMEDIATE").run()
                        held.continuation.yield()
                        for await _ in release.stream { break }
                        try await db.raw("ROLLBACK").run()
                    }
                    return true
                }
                for await _ in held.stream { break }
                tasks.addTask {
                    _ = try await risk.review(RiskPolicy(), limit: 10)
                    _ = try await risk.signals(of: try await risk.touched(since: try await risk.watermark()))
                    return true
                }
                tasks.addTask {
                    try await Task.sleep(for: .seconds(30))
                    return false
                }
                let first = try await tasks.next() ?? false
                release.continuation.yield()
                release.continuation.finish()
                var others: [Bool] = []
                for try await other in tasks.prefix(1) { others.append(other) }
                tasks.cancelAll()
                return first
            }
            #expect(finished, "the review waited for the writer")
            try await provider.close()
        }
    }

    @Test("signals against the policy's thresholds")
    func flags() {
        var signals = RiskSignals(user: "u")
        let policy = RiskPolicy(refundsToReview: 3, refundRatePermille: 300, mergedGuestsToReview: 3, declineRefundsFrom: 4)
        #expect(signals.flags(policy).isEmpty && policy.declineReason(signals) == nil)
        signals.paidPurchases = 20
        signals.refunds = 3
        #expect(signals.flags(policy).isEmpty, "3 refunds of 20 purchases is 150 ‰, under the rate")
        signals.paidPurchases = 5
        #expect(signals.flags(policy) == ["refunds"] && signals.refundRatePermille == 600)
        #expect(policy.declineReason(signals) == nil)
        signals.refunds = 4
        #expect(policy.declineReason(signals)?.contains("4 refund(s)") == true)
        signals.mergedGuests = 3
        signals.introductoryOfferRepeats = 1
        signals.sharedInstallUsers = 2
        signals.replaysRefused = 1
        signals.coinsForgiven = 40
        #expect(Set(signals.flags(policy)) == Set(RiskPolicy.signals))
        #expect(RiskPolicy().declineReason(signals) == nil, "no DECLINE unless configured")
    }
}
