import AppStoreSimulator
import Foundation
import NIOHTTP1
import OpenAPIRuntime
import StorekeeperAPI
import Testing

/// The API as the document describes it: a guest, an order, a purchase, a replay, the wallet, the admin reads and
/// the refusals, all through the client generated from `openapi.yaml`. A status the document does not list for an
/// operation, or a body its schema does not decode, fails here.
@Suite("The generated client against a live server")
struct GeneratedClientTests {
    // MARK: Tests

    @Test("a guest orders, buys, replays and spends; the admin API reads it back", arguments: TestDatabase.available)
    func guestPurchaseThroughTheDocument(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let guest = try await server.api().createGuest().created.body.json
            let client = try server.api([("X-Storekeeper-Guest", guest.token)])
            let admin = try server.api(ServerHarness.adminHeaders)

            let order = try await client.createOrder(body: .json(.init(productId: PurchaseFlowTests.coins))).created.body.json
            #expect(order.status == .created)
            #expect(order.productId == PurchaseFlowTests.coins)
            let account = try await server.store.createAccount().id
            let bought = try await server.store.purchase(
                productId: PurchaseFlowTests.coins,
                account: account,
                appAccountToken: try #require(UUID(uuidString: order.appAccountToken))
            )

            let first = try await client.submitPurchase(body: .json(.init(signedTransaction: bought.signedTransaction))).ok.body.json
            #expect(first.outcome == .delivered)
            let delivery = try #require(first.delivery)
            #expect(delivery.userId == guest.userId)
            #expect(delivery.orderId == order.orderId)
            #expect(!delivery.alreadyDelivered)
            #expect(delivery.grant?.amount == 60)

            // The same signed transaction again: answered, delivered once.
            let replay = try await client.submitPurchase(body: .json(.init(signedTransaction: bought.signedTransaction))).ok.body.json
            #expect(replay.delivery?.alreadyDelivered == true)

            let me = try await client.getMe().ok.body.json
            #expect(me.userId == guest.userId && me.guest)
            #expect(me.wallet.additionalProperties["coins"] == 60)
            let transaction = try #require(me.transactions.first)
            #expect(me.transactions.count == 1)
            #expect(transaction.transactionId == delivery.transactionId)
            #expect(transaction.currency != nil && transaction.price != nil && transaction.storefront != nil, "money columns")
            #expect(me.orders.first { $0.orderId == order.orderId }?.status == .delivered)
            #expect(try await client.getOrder(path: .init(id: order.orderId)).ok.body.json.status == .delivered)

            let spent = try await client.spendCoins(body: .json(.init(amount: 25, idempotencyKey: "unlock-3"))).ok.body.json
            #expect(spent.balance == 35)
            let overdraft = try await client.spendCoins(body: .json(.init(amount: 36, idempotencyKey: "too-much"))).conflict.body.json
            #expect(overdraft.code == "insufficient_funds")

            let adjusted = try await admin.adminAdjustWallet(
                path: .init(id: guest.userId),
                body: .json(.init(amount: 5, idempotencyKey: "goodwill-1", reason: "support"))
            ).ok.body.json
            #expect(adjusted.balance == 40 && !adjusted.repeated)

            let audit = try await admin.adminGetAudit(path: .init(id: guest.userId)).ok.body.json
            #expect(audit.userId == guest.userId)
            #expect(audit.entries.count >= 3, "delivery, spend and adjustment are audited")

            let events = try await admin.adminListEvents(query: .init(userId: guest.userId)).ok.body.json.events
            #expect(events.map(\.sequence) == Array(1...Int64(events.count)), "a user's sequence has no gaps")
            #expect(events.filter { $0._type == "purchase.delivered" }.map(\.subject) == [delivery.transactionId])
            #expect(events.filter { $0._type == "wallet.changed" }.count >= 2)

            let user = try await admin.adminGetUser(path: .init(id: guest.userId)).ok.body.json
            #expect(user.wallet.additionalProperties["coins"] == 40)
        }
    }

    @Test("refusals are the statuses and error bodies the document lists", arguments: TestDatabase.available)
    func refusalsThroughTheDocument(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let user = try server.api(ServerHarness.userHeaders("rita"))

            let forged = try await user.submitPurchase(body: .json(.init(signedTransaction: "eyJhbGciOiJFUzI1NiJ9.e30.AAAA")))
            let refusal = try forged.badRequest.body.json
            #expect(refusal.outcome == .rejected, "a forged transaction is final: the SDK finishes it")
            #expect(!refusal.code.isEmpty && !refusal.message.isEmpty)

            let unknown = try await user.createOrder(body: .json(.init(productId: "com.example.nothing"))).notFound.body.json
            #expect(unknown.code == "unknown_product")

            guard case .unauthorized(let anonymous) = try await server.api().getMe() else {
                Issue.record("an anonymous caller read /v1/me")
                return
            }
            #expect(try anonymous.body.json.code.isEmpty == false)
            guard case .unauthorized = try await user.adminListEvents() else {
                Issue.record("a user token opened the admin API")
                return
            }
            // The operations endpoints are hand-written routes, outside the generated client.
            let health = try await server.call(.GET, "/health")
            #expect(health.status == 200 && health.body["status"] as? String == "ok", "\(health.text)")
        }
    }
}
