import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperServer
import Testing

/// Orders, purchases and deliveries end to end: real HTTP against a real simulator, on SQLite and PostgreSQL.
@Suite("Purchases end to end")
struct PurchaseFlowTests {
    static let coins = "com.example.storekeeper.coins.60"
    static let chapter = "com.example.storekeeper.chapter.2"
    static let pass = "com.example.storekeeper.pass.month"
    static let monthly = "com.example.storekeeper.membership.monthly"
    static let standard = "com.example.storekeeper.membership.monthly.standard"
    static let yearly = "com.example.storekeeper.membership.yearly"

    // MARK: Tests

    @Test("each product type is ordered, bought and delivered", arguments: TestDatabase.available)
    func fourProductTypes(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let account = try await server.store.createAccount().id
            let user = "alice"

            let (coinOrder, coins) = try await server.orderAndBuy(Self.coins, user: user, account: account)
            let coinReply = try await server.submit(coins.signedTransaction, headers: ServerHarness.userHeaders(user))
            #expect(coinReply.status == 200, "\(coinReply.text)")
            #expect(coinReply.outcome == "delivered")
            let coinDelivery = try #require(coinReply.delivery)
            #expect(coinDelivery["orderId"] as? String == coinOrder)
            #expect(coinDelivery["alreadyDelivered"] as? Bool == false)
            #expect((coinDelivery["grant"] as? [String: Any])?["amount"] as? Int == 60)
            #expect(try await server.coins(user) == 60)

            let (_, chapter) = try await server.orderAndBuy(Self.chapter, user: user, account: account)
            #expect(try await server.submit(chapter.signedTransaction, headers: ServerHarness.userHeaders(user)).outcome == "delivered")

            let (_, pass1) = try await server.orderAndBuy(Self.pass, user: user, account: account)
            let (_, pass2) = try await server.orderAndBuy(Self.pass, user: user, account: account)
            let p1 = try await server.submit(pass1.signedTransaction, headers: ServerHarness.userHeaders(user))
            let p2 = try await server.submit(pass2.signedTransaction, headers: ServerHarness.userHeaders(user))
            let end1 = try #require((p1.delivery?["grant"] as? [String: Any])?["endsAt"] as? String)
            let start2 = try #require((p2.delivery?["grant"] as? [String: Any])?["startsAt"] as? String)
            #expect(end1 == start2, "a second pass starts where the first ends (server time)")

            let (_, monthly) = try await server.orderAndBuy(Self.monthly, user: user, account: account)
            let sub = try await server.submit(monthly.signedTransaction, headers: ServerHarness.userHeaders(user))
            #expect(sub.outcome == "delivered", "\(sub.text)")

            let me = try await server.me(user)
            #expect(server.entitlement("chapter.2", of: me)?.active == true)
            #expect(server.entitlement("chapter.2", of: me)?.expiresAt == nil)
            #expect(server.entitlement("pass", of: me)?.active == true)
            #expect(server.entitlement("pass", of: me)?.sources.count == 2)
            let membership = try #require(server.entitlement("membership", of: me))
            #expect(membership.active)
            let expected = ISO8601DateFormatter().string(from: try #require(monthly.transaction.expiresDate))
            #expect(membership.expiresAt.map(ISO8601DateFormatter().string(from:)) == expected)
            #expect(membership.sandbox, "simulator purchases are sandbox, and flagged")
            #expect(me.orders.allSatisfy { $0.status == .delivered })
            #expect(me.transactions.count == 5)
            // What each purchase earned is kept as Apple signed it and shown with the transaction.
            let coinTransaction = try #require(me.transactions.first { $0.transactionId == coins.transaction.transactionId })
            #expect(coinTransaction.price != nil)
            #expect(coinTransaction.price == coins.transaction.price)
            #expect(coinTransaction.currency == coins.transaction.currency)
            #expect(coinTransaction.storefront == coins.transaction.storefront)
            #expect(coinTransaction.transactionReason == "PURCHASE")
            #expect(coinTransaction.appTransactionId == coins.transaction.appTransactionId)
            // Every delivery is announced once in the outbox, on the user's own gap-free sequence.
            let items = try await server.api(ServerHarness.adminHeaders).adminListEvents(query: .init(userId: user)).ok.body.json.events
            #expect(items.filter { $0._type == "purchase.delivered" }.count == 5)
            #expect(items.map(\.sequence) == Array(1...Int64(items.count)))

            let audit = try await server.audit(user)
            #expect(audit.filter { $0.action == "wallet.credited" }.count == 1)
            #expect(audit.filter { $0.action == "entitlement.granted" }.count == 4)
            #expect(audit.filter { $0.action == "order.delivered" }.count == 5)
        }
    }

    @Test("the same transaction submitted 100 times at once is delivered once", arguments: TestDatabase.available)
    func concurrentResubmission(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let account = try await server.store.createAccount().id
            let (_, purchase) = try await server.orderAndBuy(Self.coins, user: "bob", account: account)
            let replies = try await withThrowingTaskGroup(of: (Int, String?, Bool?).self) { group in
                for _ in 0..<100 {
                    group.addTask {
                        let reply = try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders("bob"))
                        return (reply.status, reply.outcome, reply.delivery?["alreadyDelivered"] as? Bool)
                    }
                }
                var all: [(Int, String?, Bool?)] = []
                for try await reply in group { all.append(reply) }
                return all
            }
            #expect(replies.allSatisfy { $0.0 == 200 && $0.1 == "delivered" })
            #expect(replies.filter { $0.2 == false }.count == 1, "exactly one request delivered it")
            #expect(try await server.coins("bob") == 60)
            let credits = try await server.audit("bob").filter { $0.action == "wallet.credited" }
            #expect(credits.count == 1)
        }
    }

    @Test("a cancelled order is still delivered when Apple reports it paid", arguments: TestDatabase.available)
    func cancelThenSuccess(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let account = try await server.store.createAccount().id
            let (orderId, purchase) = try await server.orderAndBuy(Self.chapter, user: "carol", account: account)
            let cancelled = try await server.call(.POST, "/v1/orders/\(orderId)/cancel", headers: ServerHarness.userHeaders("carol"))
            #expect(cancelled["status"] as? String == "cancelled")
            // The purchase arrives through a restore with no caller-supplied order: the appAccountToken finds it.
            let reply = try await server.call(
                .POST,
                "/v1/purchases",
                json: ["signedTransaction": purchase.signedTransaction],
                headers: [("X-API-Key", ServerHarness.apiKey)]
            )
            #expect(reply.outcome == "delivered", "\(reply.text)")
            #expect(reply.delivery?["userId"] as? String == "carol")
            let order = try await server.call(.GET, "/v1/orders/\(orderId)", headers: ServerHarness.userHeaders("carol"))
            #expect(order["status"] as? String == "delivered")
            // Another user cannot see the order.
            let other = try await server.call(.GET, "/v1/orders/\(orderId)", headers: ServerHarness.userHeaders("mallory"))
            #expect(other.status == 404)
        }
    }

    @Test("coins are spent with an idempotency key and never overdrawn", arguments: TestDatabase.available)
    func spending(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let account = try await server.store.createAccount().id
            let (_, coins) = try await server.orderAndBuy(Self.coins, user: "tess", account: account)
            _ = try await server.submit(coins.signedTransaction, headers: ServerHarness.userHeaders("tess"))
            let spend: [String: Any] = ["amount": 25, "idempotencyKey": "chapter-3-unlock"]
            let first = try await server.call(.POST, "/v1/wallet/spend", json: spend, headers: ServerHarness.userHeaders("tess"))
            #expect(first["balance"] as? Int == 35)
            let repeated = try await server.call(.POST, "/v1/wallet/spend", json: spend, headers: ServerHarness.userHeaders("tess"))
            #expect(repeated["balance"] as? Int == 35)
            #expect(repeated["repeated"] as? Bool == true)
            let overdraft = try await server.call(
                .POST,
                "/v1/wallet/spend",
                json: ["amount": 36, "idempotencyKey": "too-much"],
                headers: ServerHarness.userHeaders("tess")
            )
            #expect(overdraft.status == 409)
            #expect(overdraft.code == "insufficient_funds")
            // Concurrent spends of the whole balance: exactly one wins.
            let winners = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<10 {
                    group.addTask {
                        let reply = try await server.call(
                            .POST,
                            "/v1/wallet/spend",
                            json: ["amount": 35, "idempotencyKey": "race-\(index)"],
                            headers: ServerHarness.userHeaders("tess")
                        )
                        return reply.status == 200
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(winners == 1)
            #expect(try await server.coins("tess") == 0)
            let debits = try await server.audit("tess").filter { $0.action == "wallet.debited" }
            #expect(debits.count == 2)
        }
    }

    @Test("a StoreKit 2 history restore delivers what was never delivered, once", arguments: TestDatabase.available)
    func restore(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let account = try await server.store.createAccount().id
            _ = try await server.store.purchase(productId: Self.chapter, account: account)
            _ = try await server.store.purchase(productId: Self.yearly, account: account)
            _ = try await server.store.purchase(productId: Self.pass, account: account)
            let history = try await server.store.restore(account: account)
            #expect(history.count >= 2)
            let reply = try await server.call(.POST, "/v1/restore", json: ["signedTransactions": history], headers: ServerHarness.userHeaders("uma"))
            #expect(reply.outcome == "delivered", "\(reply.text)")
            let deliveries = try #require(reply["deliveries"] as? [[String: Any]])
            #expect(deliveries.count == history.count)
            #expect(deliveries.allSatisfy { $0["alreadyDelivered"] as? Bool == false })
            let again = try await server.call(.POST, "/v1/restore", json: ["signedTransactions": history], headers: ServerHarness.userHeaders("uma"))
            #expect((again["deliveries"] as? [[String: Any]])?.allSatisfy { $0["alreadyDelivered"] as? Bool == true } == true)
            let me = try await server.me("uma")
            #expect(server.entitlement("chapter.2", of: me)?.active == true)
            #expect(server.entitlement("membership", of: me)?.active == true)
        }
    }
}
