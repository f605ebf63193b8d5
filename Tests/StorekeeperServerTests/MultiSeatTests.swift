import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperServer
import Testing

/// Issue 31, item 2 (the purchaser's side): a multiseat subscription is delivered to its purchaser, its revenue counts
/// every seat at its tier's price, and a seat refund (`REFUND` / `SEATS`) leaves the subscription to the seats left
/// instead of revoking it; the next renewal bills only those.
@Suite("Multiseat subscriptions")
struct MultiSeatTests {
    static let teams = "com.example.storekeeper.teams.monthly"

    @Test(
        "12 seats: revenue at the tiers' prices, a refund of 2 seats keeps the purchaser's subscription, the renewal bills 10",
        arguments: TestDatabase.available
    )
    func seats(database: TestDatabase) async throws {
        try await ServerHarness.run(database, environment: .production) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let account = try await store.createAccount().id
            let order = try await server.api(ServerHarness.userHeaders("tess")).createOrder(body: .json(.init(productId: Self.teams)))
                .created.body.json
            let token = try #require(UUID(uuidString: order.appAccountToken))
            let bought = try await store.purchase(
                productId: Self.teams,
                account: account,
                options: PurchaseOptions(appAccountToken: token, quantity: 12)
            )
            #expect(bought.transaction.quantity == 12)
            #expect(
                bought.transaction.multiSeatInfo?.priceTiers == [.init(tierPrice: 9990, tierQuantity: 5), .init(tierPrice: 7140, tierQuantity: 7)]
            )
            let reply = try await server.submit(bought.signedTransaction, headers: ServerHarness.userHeaders("tess"), orderId: order.orderId)
            #expect(reply.status == 200 && reply.outcome == "delivered", "\(reply.text)")
            try await server.deliverAndApply()
            #expect(try await server.activeEntitlements("tess", at: await server.simulatedNow).contains("teams"))

            // Every seat is revenue: 5 at 9.99 and 7 at 7.14, not 12 × the average Apple puts in `price`.
            let first = try #require(try await RevenueTests.revenue(server, "tess").transactions.first)
            #expect(first.customerPrice == Int64(5 * 9990 + 7 * 7140), "\(first)")

            // Apple refunds 2 seats: the purchaser keeps the subscription for the 10 left.
            let original = try #require(bought.transaction.originalTransactionId)
            try await store.refundSeats(originalTransactionId: original, count: 2)
            let refund = try #require(await store.sentNotifications().last)
            #expect(refund.type == .refund && refund.subtype == .seats)
            try await server.deliverAndApply()
            #expect(try await server.activeEntitlements("tess", at: await server.simulatedNow).contains("teams"))
            #expect(try await server.subscription(original)["state"] as? String == "active")
            // Revenue gives the 2 seats back at the average Apple reports per seat; audited on the purchaser.
            let refunded = try #require(try await RevenueTests.revenue(server, "tess").transactions.first { $0.transactionId == original })
            let total: Int64 = 5 * 9990 + 7 * 7140
            let twoSeats: Int64 = total * 2 / 12
            #expect(refunded.customerPrice == total && refunded.refundedPrice == twoSeats, "\(refunded)")
            #expect(try await server.audit("tess").contains { $0.action == "transaction.refunded" && $0.amount == 2 })
            // The same refund told again changes nothing.
            let notification = try #require(await store.sentNotifications().last)
            _ = try await server.call(.POST, "/apple/notifications/v2", json: ["signedPayload": notification.signedPayload])
            try await server.deliverAndApply()
            #expect(try await server.audit("tess").filter { $0.action == "transaction.refunded" }.count == 1)

            // The renewal bills 10 seats.
            try await store.advance(by: 31 * 86_400)
            try await server.deliverAndApply()
            let renewal = try #require(await store.transactions(account: account).last)
            #expect(renewal.quantity == 10 && renewal.transactionId != original)
            #expect(try await server.activeEntitlements("tess", at: await server.simulatedNow).contains("teams"))
            let revenue = try await RevenueTests.revenue(server, "tess").transactions
            #expect(revenue.first { $0.transactionId == renewal.transactionId }?.customerPrice == Int64(5 * 9990 + 5 * 7140), "\(revenue)")
        }
    }
}
