import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperCore
import StorekeeperServer
import Testing

/// Who receives a purchase: orders, bindings, the transfer policy, guests, and several servers on one database.
@Suite("Attribution end to end")
struct AttributionTests {
    static let chapter = PurchaseFlowTests.chapter
    static let coins = PurchaseFlowTests.coins
    static let pass = PurchaseFlowTests.pass

    // MARK: Tests

    @Test("user B submitting user A's transaction is refused by default", arguments: TestDatabase.available)
    func replayByAnotherUserRefused(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let account = try await server.store.createAccount().id
            let (_, purchase) = try await server.orderAndBuy(Self.chapter, user: "anna", account: account)
            #expect(try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders("anna")).outcome == "delivered")
            let replay = try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders("ben"))
            #expect(replay.status == 409)
            #expect(replay.code == "owned_by_another_user")
            #expect(replay.outcome == "rejected")
            #expect(server.entitlement("chapter.2", of: try await server.me("ben")) == nil)
            #expect(server.entitlement("chapter.2", of: try await server.me("anna"))?.active == true)
            #expect(try await server.audit("anna").contains { $0.action == "transaction.claim_refused" })
        }
    }

    @Test("under the transfer policy the unlock moves to the submitter, audited on both sides", arguments: TestDatabase.available)
    func replayTransferred(database: TestDatabase) async throws {
        try await ServerHarness.run(database, configure: { $0.transferPolicy = .transfer }) { server in
            let account = try await server.store.createAccount().id
            let (_, purchase) = try await server.orderAndBuy(Self.chapter, user: "anna", account: account)
            _ = try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders("anna"))
            let moved = try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders("ben"))
            #expect(moved.status == 200, "\(moved.text)")
            #expect(moved.delivery?["userId"] as? String == "ben")
            #expect(moved.delivery?["transferred"] as? Bool == true)
            #expect(server.entitlement("chapter.2", of: try await server.me("ben"))?.active == true)
            #expect(server.entitlement("chapter.2", of: try await server.me("anna")) == nil)
            #expect(try await server.audit("anna").contains { $0.action == "entitlement.transferred_out" })
            #expect(try await server.audit("ben").contains { $0.action == "entitlement.transferred_in" })
        }
    }

    @Test("a guest buys, signs in, and keeps the purchase", arguments: TestDatabase.available)
    func guestThenLogin(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let account = try await server.store.createAccount().id
            let guest = try await server.newGuest()
            let order = try await server.call(.POST, "/v1/orders", json: ["productId": Self.pass], headers: guest.headers)
            #expect(order.status == 201, "\(order.text)")
            let tokenText = try #require(order["appAccountToken"] as? String)
            let token = try #require(UUID(uuidString: tokenText))
            let pass = try await server.store.purchase(productId: Self.pass, account: account, appAccountToken: token)
            let coins = try await server.store.purchase(productId: Self.coins, account: account)
            #expect(try await server.submit(pass.signedTransaction, headers: guest.headers).outcome == "delivered")
            #expect(try await server.submit(coins.signedTransaction, headers: guest.headers).outcome == "delivered")
            let guestMe = try await server.call(.GET, "/v1/me", headers: guest.headers)
            #expect(guestMe["guest"] as? Bool == true)

            let merged = try await server.call(.POST, "/v1/me/merge", json: ["guestToken": guest.token], headers: ServerHarness.userHeaders("dana"))
            #expect(merged.status == 200, "\(merged.text)")
            #expect(merged["transactions"] as? Int == 2)
            #expect(merged["coins"] as? Int == 60)
            let me = try await server.me("dana")
            #expect(server.entitlement("pass", of: me)?.active == true)
            #expect(try await server.coins("dana") == 60)
            let after = try await server.call(.GET, "/v1/me", headers: guest.headers)
            #expect((after["entitlements"] as? [Any])?.isEmpty == true)
            #expect((after["wallet"] as? [String: Any])?["coins"] as? Int == 0)
            // A renewal-style resubmission by the account now finds it already theirs.
            let again = try await server.submit(pass.signedTransaction, headers: ServerHarness.userHeaders("dana"))
            #expect(again.delivery?["alreadyDelivered"] as? Bool == true)
            // Merging twice moves nothing more.
            let twice = try await server.call(.POST, "/v1/me/merge", json: ["guestToken": guest.token], headers: ServerHarness.userHeaders("dana"))
            #expect(twice["transactions"] as? Int == 0)
            #expect(try await server.coins("dana") == 60)
        }
    }

    @Test("a purchase with no order and no user is parked for recovery, then delivered to a user")
    func unattributedParked() async throws {
        try await ServerHarness.run(.sqlite) { server in
            let account = try await server.store.createAccount().id
            let purchase = try await server.store.purchase(productId: Self.chapter, account: account)
            let parked = try await server.submit(purchase.signedTransaction, headers: [("X-API-Key", ServerHarness.apiKey)])
            #expect(parked.status == 202)
            #expect(parked.outcome == "retry")
            let pending = try await server.call(.GET, "/v1/admin/pending", headers: ServerHarness.adminHeaders)
            #expect((pending["pending"] as? [[String: Any]])?.first?["transactionId"] as? String == purchase.transaction.transactionId)
            let delivered = try await server.submit(
                purchase.signedTransaction,
                headers: [("X-API-Key", ServerHarness.apiKey), ("X-Storekeeper-User", "gus")]
            )
            #expect(delivered.delivery?["userId"] as? String == "gus")
            let after = try await server.call(.GET, "/v1/admin/pending", headers: ServerHarness.adminHeaders)
            #expect((after["pending"] as? [Any])?.isEmpty == true)
        }
    }

    @Test(
        "several servers on one PostgreSQL deliver a transaction submitted 100 times once",
        .enabled(if: TestDatabase.available.contains(.postgres), "needs PostgreSQL (POSTGRES_PORT)")
    )
    func severalInstances() async throws {
        try await ServerHarness.run(.postgres, instances: 3) { server in
            let account = try await server.store.createAccount().id
            let (_, coins) = try await server.orderAndBuy(Self.coins, user: "hana", account: account)
            let (_, pass) = try await server.orderAndBuy(Self.pass, user: "hana", account: account)
            let (_, pass2) = try await server.orderAndBuy(Self.pass, user: "hana", account: account)
            let fresh = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<300 {
                    let jws = [coins, pass, pass2][index % 3].signedTransaction
                    group.addTask {
                        let reply = try await server.submit(jws, headers: ServerHarness.userHeaders("hana"), instance: index / 3)
                        #expect(reply.status == 200, "\(reply.text)")
                        return reply.delivery?["alreadyDelivered"] as? Bool == false
                    }
                }
                var count = 0
                for try await isFresh in group where isFresh { count += 1 }
                return count
            }
            #expect(fresh == 3)
            #expect(try await server.coins("hana") == 60)
            let passes = try #require(server.entitlement("pass", of: try await server.me("hana"))?.sources)
            #expect(passes.count == 2)
            let ends = passes.compactMap(\.endsAt).sorted()
            let starts = passes.map(\.startsAt).sorted()
            #expect(ends.count == 2 && starts.count == 2 && starts[1] == ends[0], "the two passes stack, whichever process won")
        }
    }
}
