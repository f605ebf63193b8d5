import AppStoreSimulator
import AppStoreWire
import Foundation
import StorekeeperAPI
import StorekeeperServer
import Testing

/// Issue 19, item 2: a yearly subscription paid monthly with a 12-month commitment (API 1.21). The simulator sells
/// and renews it as Apple describes; the server follows the commitment — payments made and left, its end — and
/// turning auto-renew off stops the renewal after the commitment, not the payments in it.
@Suite("Monthly billing with a 12-month commitment")
struct CommitmentPlanTests {
    static let day: TimeInterval = 86_400

    static func subscription(_ server: ServerHarness, _ user: String) async throws -> Components.Schemas.Subscription {
        try #require(try await server.me(user).subscriptions.first)
    }

    @Test(
        "twelve monthly payments, auto-renew turned off after the second: renewals go on to the commitment's end, then it expires",
        arguments: TestDatabase.available
    )
    func commitmentRunsToItsEnd(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (account, token) = try await server.newCustomer("cora", product: PurchaseFlowTests.yearly)
            let bought = try await store.purchase(
                productId: PurchaseFlowTests.yearly,
                account: account,
                options: PurchaseOptions(appAccountToken: token, billingPlan: .monthly)
            )
            #expect(bought.transaction.billingPlanType == .monthly)
            #expect(bought.transaction.price == 8_990, "one monthly payment, not the year")
            let start = try #require(bought.transaction.purchaseDate)
            let commitmentEnd = try #require(bought.transaction.commitmentInfo?.commitmentExpiresDate)
            #expect(commitmentEnd > start.addingTimeInterval(364 * Self.day))
            try await server.deliverAndApply()

            var subscription = try await Self.subscription(server, "cora")
            #expect(subscription.billingPlan == .monthly)
            let first = try #require(subscription.commitment)
            #expect(first.paymentsMade == 1 && first.paymentsTotal == 12 && first.paymentsLeft == 11)
            #expect(first.price == 107_880, "twelve payments of 8.99")
            #expect(first.endsAt.map { abs($0.timeIntervalSince(commitmentEnd)) < 1 } == true)
            #expect(first.renewsAfterCommitment == true)

            // The second month is paid; then the customer turns auto-renew off.
            try await store.advance(by: 31 * Self.day)
            try await server.deliverAndApply()
            let original = try #require(bought.transaction.originalTransactionId)
            try await store.setAutoRenew(false, originalTransactionId: original)
            try await server.deliverAndApply()
            subscription = try await Self.subscription(server, "cora")
            #expect(subscription.autoRenew == false)
            #expect(subscription.commitment?.paymentsMade == 2 && subscription.commitment?.paymentsLeft == 10)
            #expect(subscription.commitment?.renewsAfterCommitment == false, "no new commitment after this one")

            // The payments go on: every month is renewed and delivered up to the twelfth.
            for _ in 0..<10 {
                try await store.advance(by: 31 * Self.day)
                try await server.deliverAndApply()
            }
            subscription = try await Self.subscription(server, "cora")
            #expect(subscription.state == .active)
            #expect(subscription.commitment?.paymentsMade == 12 && subscription.commitment?.paymentsLeft == 0)
            let renewals = await store.transactions(account: account).filter { $0.originalTransactionId == original }
            #expect(renewals.count == 12, "twelve payments")
            #expect(renewals.allSatisfy { $0.billingPlanType == .monthly && $0.price == 8_990 })
            #expect(renewals.map { $0.commitmentInfo?.billingPeriodNumber } == (1...12).map { Int32($0) })
            try await server.expectMatchesTruth(user: "cora", token: token, "in the commitment's last month")
            #expect(try await server.activeEntitlements("cora", at: await server.simulatedNow).contains("membership"))

            // The commitment ends; auto-renew was off, so the subscription expires then.
            try await store.advance(by: 31 * Self.day)
            try await server.deliverAndApply()
            subscription = try await Self.subscription(server, "cora")
            #expect(subscription.state == .expired)
            #expect(subscription.expirationReason == "VOLUNTARY")
            #expect(await store.sentNotifications().last?.type == .expired)
            try await server.expectMatchesTruth(user: "cora", token: token, "after the commitment")
            #expect(try await server.activeEntitlements("cora", at: await server.simulatedNow).isEmpty)
        }
    }

    @Test("a commitment with auto-renew on starts the next one; the simulator refuses the plan where the product has none")
    func nextCommitment() async throws {
        try await ServerHarness.run(.sqlite) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (account, token) = try await server.newCustomer("cato", product: PurchaseFlowTests.yearly)
            await #expect(throws: SimulatorError.self) {
                try await store.purchase(
                    productId: PurchaseFlowTests.monthly,
                    account: account,
                    options: PurchaseOptions(appAccountToken: token, billingPlan: .monthly)
                )
            }
            _ = try await store.purchase(
                productId: PurchaseFlowTests.yearly,
                account: account,
                options: PurchaseOptions(appAccountToken: token, billingPlan: .monthly)
            )
            try await server.deliverAndApply()
            for _ in 0..<12 {
                try await store.advance(by: 31 * Self.day)
                try await server.deliverAndApply()
            }
            let subscription = try await Self.subscription(server, "cato")
            #expect(subscription.state == .active)
            #expect(subscription.commitment?.paymentsMade == 1, "a new commitment began")
            #expect(subscription.commitment?.paymentsLeft == 11)
            try await server.expectMatchesTruth(user: "cato", token: token, "in the second commitment")
        }
    }
}
