import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperCore
import StorekeeperServer
import Testing

/// Money and identity holes found by attacking the server (issue 13, items 1 and 4–9): each test failed before
/// its fix.
@Suite("Hardening: money and identity")
struct HardeningIdentityTests {
    static let coins = PurchaseFlowTests.coins
    static let chapter = PurchaseFlowTests.chapter
    static let pass = PurchaseFlowTests.pass
    static let monthly = PurchaseFlowTests.monthly

    static func encoded(_ user: String) -> String {
        user.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? user
    }

    // MARK: Tests

    @Test("item 1: a guest is a server-issued credential; its id alone buys, reads and merges nothing", arguments: TestDatabase.available)
    func guestCredential(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let account = try await server.store.createAccount().id
            let victim = try await server.newGuest()
            #expect(victim.userId.hasPrefix("guest:"))
            let secret = try #require(victim.token.split(separator: ".").last)
            #expect(secret.count >= 22, "at least 128 bits of secret")
            #expect(!victim.token.contains(victim.userId.dropFirst("guest:".count)) || secret.count >= 22)
            let order = try await server.call(.POST, "/v1/orders", json: ["productId": Self.coins], headers: victim.headers)
            #expect(order.status == 201, "\(order.text)")
            let token = try #require(UUID(uuidString: order["appAccountToken"] as? String ?? ""))
            let bought = try await server.store.purchase(productId: Self.coins, account: account, appAccountToken: token)
            #expect(try await server.submit(bought.signedTransaction, headers: victim.headers).outcome == "delivered")

            // A device id is no credential, whatever it is.
            let device = try await server.call(.GET, "/v1/me", headers: [("X-Storekeeper-Device", "12345678")])
            #expect(device.status == 401, "\(device.text)")
            #expect(device.code == "device_id_not_accepted")
            // Neither is a guessed or altered credential.
            for forged in [victim.token + "x", String(victim.token.dropLast(4)) + "AAAA", victim.userId, "garbage"] {
                let reply = try await server.call(.GET, "/v1/me", headers: [("X-Storekeeper-Guest", forged)])
                #expect(reply.status == 401, "\(forged): \(reply.text)")
                #expect(reply.code == "invalid_guest_token")
            }
            // Merging by id (the old body) or with a wrong credential moves nothing.
            let mallory = ServerHarness.userHeaders("mallory")
            let byId = try await server.call(.POST, "/v1/me/merge", json: ["deviceId": victim.userId], headers: mallory)
            #expect(byId.status == 400, "\(byId.text)")
            #expect(byId.code == "guest_token_required")
            let wrong = try await server.call(
                .POST,
                "/v1/me/merge",
                json: ["guestToken": String(victim.token.dropLast(4)) + "AAAA"],
                headers: mallory
            )
            #expect(wrong.status == 403, "\(wrong.text)")
            #expect(wrong.code == "invalid_guest_token")
            #expect(try await server.coins("mallory") == 0)
            let victimMe = try await server.call(.GET, "/v1/me", headers: victim.headers)
            #expect((victimMe["wallet"] as? [String: Any])?["coins"] as? Int == 60)
            #expect(victimMe["userId"] as? String == victim.userId)
            // A guest cannot merge another guest into itself.
            let other = try await server.newGuest()
            let guestMerge = try await server.call(.POST, "/v1/me/merge", json: ["guestToken": victim.token], headers: other.headers)
            #expect(guestMerge.status == 403)

            // The owner of the credential merges.
            let merged = try await server.call(.POST, "/v1/me/merge", json: ["guestToken": victim.token], headers: ServerHarness.userHeaders("vera"))
            #expect(merged.status == 200, "\(merged.text)")
            #expect(try await server.coins("vera") == 60)
        }
    }

    @Test("item 1: a guest from before credentials claims its purchases with Apple's proof, once", arguments: TestDatabase.available)
    func legacyGuestClaim(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let account = try await server.store.createAccount().id
            // A guest keyed by a device id, as clients created them before guest credentials (through the backend here).
            let legacy = [("X-API-Key", ServerHarness.apiKey), ("X-Storekeeper-User", "guest:legacy-device-0001")]
            let bought = try await server.store.purchase(productId: Self.chapter, account: account)
            #expect(try await server.submit(bought.signedTransaction, headers: legacy).outcome == "delivered")
            let stranger = try await server.store.purchase(productId: Self.chapter, account: try await server.store.createAccount().id)

            let noProof = try await server.call(.POST, "/v1/guests/claim", json: ["deviceId": "legacy-device-0001", "signedTransactions": []])
            #expect(noProof.status == 400, "\(noProof.text)")
            let wrongProof = try await server.call(
                .POST,
                "/v1/guests/claim",
                json: ["deviceId": "legacy-device-0001", "signedTransactions": [stranger.signedTransaction]]
            )
            #expect(wrongProof.status == 403, "\(wrongProof.text)")
            #expect(wrongProof.code == "claim_not_proved")

            let claimed = try await server.call(
                .POST,
                "/v1/guests/claim",
                json: ["deviceId": "legacy-device-0001", "signedTransactions": [bought.signedTransaction]]
            )
            #expect(claimed.status == 201, "\(claimed.text)")
            #expect(claimed["userId"] as? String == "guest:legacy-device-0001")
            let token = try #require(claimed["token"] as? String)
            let me = try await server.call(.GET, "/v1/me", headers: [("X-Storekeeper-Guest", token)])
            #expect(server.entitlement("chapter.2", of: me.body)?["active"] as? Bool == true)
            // Claimed once: the same proof again gets nothing.
            let again = try await server.call(
                .POST,
                "/v1/guests/claim",
                json: ["deviceId": "legacy-device-0001", "signedTransactions": [bought.signedTransaction]]
            )
            #expect(again.status == 409, "\(again.text)")
            #expect(again.code == "already_claimed")
        }
    }

    @Test("item 4: wallet idempotency keys belong to their user, whatever the characters", arguments: TestDatabase.available)
    func idempotencyKeysPerUser(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            for user in ["victim01:k1", "victim01"] {
                let credit = try await server.call(
                    .POST,
                    "/v1/admin/users/\(Self.encoded(user))/wallet/adjust",
                    json: ["amount": 100, "idempotencyKey": "seed"],
                    headers: ServerHarness.adminHeaders
                )
                #expect(credit.status == 200, "\(credit.text)")
            }
            let first = try await server.call(
                .POST,
                "/v1/wallet/spend",
                json: ["amount": 10, "idempotencyKey": "k2"],
                headers: ServerHarness.userHeaders("victim01:k1")
            )
            #expect(first["balance"] as? Int == 90)
            let second = try await server.call(
                .POST,
                "/v1/wallet/spend",
                json: ["amount": 10, "idempotencyKey": "k1:k2"],
                headers: ServerHarness.userHeaders("victim01")
            )
            #expect(second.status == 200, "\(second.text)")
            #expect(second["repeated"] as? Bool == false)
            #expect(second["balance"] as? Int == 90)
            #expect(try await server.coins("victim01") == 90)

            // Admin adjustments: user "u1:x" key "k" and user "u1" key "x:k" are different adjustments.
            let a = try await server.call(
                .POST,
                "/v1/admin/users/\(Self.encoded("u1:x"))/wallet/adjust",
                json: ["amount": 5, "idempotencyKey": "k"],
                headers: ServerHarness.adminHeaders
            )
            let b = try await server.call(
                .POST,
                "/v1/admin/users/u1/wallet/adjust",
                json: ["amount": 7, "idempotencyKey": "x:k"],
                headers: ServerHarness.adminHeaders
            )
            #expect(a["repeated"] as? Bool == false)
            #expect(b["repeated"] as? Bool == false, "\(b.text)")
            #expect(try await server.coins("u1") == 7)
            // A real repeat is still a repeat.
            let repeatB = try await server.call(
                .POST,
                "/v1/admin/users/u1/wallet/adjust",
                json: ["amount": 7, "idempotencyKey": "x:k"],
                headers: ServerHarness.adminHeaders
            )
            #expect(repeatB["repeated"] as? Bool == true)
            #expect(try await server.coins("u1") == 7)
        }
    }

    @Test("item 5: user ids compare byte for byte (jose\u{301} is not jos\u{E9})", arguments: TestDatabase.available)
    func identitiesCompareBytes(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let precomposed = "jos\u{E9}"
            let decomposed = "jose\u{301}"
            #expect(precomposed == decomposed, "Swift strings call these equal: the reason for this test")
            let account = try await server.store.createAccount().id
            let (orderId, purchase) = try await server.orderAndBuy(Self.chapter, user: precomposed, account: account)
            #expect(try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders(precomposed)).outcome == "delivered")
            let read = try await server.call(.GET, "/v1/orders/\(orderId)", headers: ServerHarness.userHeaders(decomposed))
            #expect(read.status == 404, "\(read.text)")
            let cancel = try await server.call(.POST, "/v1/orders/\(orderId)/cancel", headers: ServerHarness.userHeaders(decomposed))
            #expect(cancel.status == 404)
            let replay = try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders(decomposed))
            #expect(replay.status == 409, "\(replay.text)")
            #expect(replay.code == "owned_by_another_user")
            #expect(server.entitlement("chapter.2", of: try await server.me(decomposed)) == nil)
            #expect(server.entitlement("chapter.2", of: try await server.me(precomposed))?.active == true)
        }
    }

    @Test("item 6: an order id a client names never outranks the transaction's own order or the caller", arguments: TestDatabase.available)
    func orderIdMatchesItsTransaction(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let amyAccount = try await server.store.createAccount().id
            let bobAccount = try await server.store.createAccount().id
            _ = amyAccount
            let amyChapter = try await server.call(.POST, "/v1/orders", json: ["productId": Self.chapter], headers: ServerHarness.userHeaders("amy"))
            let amyChapterId = try #require(amyChapter["orderId"] as? String)
            let amyCoins = try await server.call(.POST, "/v1/orders", json: ["productId": Self.coins], headers: ServerHarness.userHeaders("amy"))
            let amyCoinsId = try #require(amyCoins["orderId"] as? String)

            // Bob's own transaction (his order's token) sent with Amy's order id.
            let (_, own) = try await server.orderAndBuy(Self.coins, user: "bob", account: bobAccount)
            let first = try await server.submit(own.signedTransaction, headers: ServerHarness.userHeaders("bob"), orderId: amyChapterId)
            #expect(first.delivery?["userId"] as? String == "bob", "\(first.text)")
            // Bob's transaction without any token, of the product Amy's other order is for.
            let plain = try await server.store.purchase(productId: Self.coins, account: bobAccount)
            let second = try await server.submit(plain.signedTransaction, headers: ServerHarness.userHeaders("bob"), orderId: amyCoinsId)
            #expect(second.delivery?["userId"] as? String == "bob", "\(second.text)")
            #expect(second.delivery?["orderId"] == nil || second.delivery?["orderId"] is NSNull)

            #expect(try await server.coins("bob") == 120)
            #expect(try await server.coins("amy") == 0)
            for orderId in [amyChapterId, amyCoinsId] {
                let order = try await server.call(.GET, "/v1/orders/\(orderId)", headers: ServerHarness.userHeaders("amy"))
                #expect(order["status"] as? String == "created", "\(order.text)")
            }
            let ignored = try await server.audit("amy").filter { $0.action == "order.ignored" }
            #expect(ignored.count == 2, "both attempts are in the order owner's audit")
        }
    }

    @Test("item 7: a repeated introductory offer under another Apple ID is delivered but flagged", arguments: TestDatabase.available)
    func introductoryOfferFarmingFlagged(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let first = try await server.store.createAccount().id
            let (_, trial) = try await server.orderAndBuy(Self.monthly, user: "farmer", account: first)
            #expect(trial.transaction.offerType == .introductory)
            #expect(try await server.submit(trial.signedTransaction, headers: ServerHarness.userHeaders("farmer")).outcome == "delivered")
            #expect(try await server.audit("farmer").allSatisfy { $0.action.hasPrefix("risk.") != true })

            // A second Apple ID gets the trial again from Apple, bought without an order.
            let second = try await server.store.createAccount().id
            let again = try await server.store.purchase(productId: Self.monthly, account: second)
            #expect(again.transaction.offerType == .introductory)
            let reply = try await server.submit(again.signedTransaction, headers: ServerHarness.userHeaders("farmer"))
            #expect(reply.outcome == "delivered", "Apple charged (or will): deliver")
            let flags = try await server.audit("farmer").filter { $0.action == "risk.introductory_offer_repeated" }
            #expect(flags.count == 1)
            #expect(flags.first?.subject == again.transaction.originalTransactionId)
            let metrics = try await server.call(.GET, "/metrics")
            #expect(metrics.text.contains("storekeeper_risk_flags_total{flag=\"introductory_offer_repeated\"} 1"), "\(metrics.text.prefix(0))")
            // The same transaction again is not flagged twice.
            _ = try await server.submit(again.signedTransaction, headers: ServerHarness.userHeaders("farmer"))
            #expect(try await server.audit("farmer").filter { $0.action == "risk.introductory_offer_repeated" }.count == 1)
        }
    }

    @Test("item 8: a merge moves every user-keyed row, so later refunds and reversals land on the account", arguments: TestDatabase.available)
    func mergeMovesEverything(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            await server.store.setDeliversNotifications(true)
            let account = try await server.store.createAccount().id
            let guest = try await server.newGuest()
            var bought: [SimulatedPurchase] = []
            for product in [Self.monthly, Self.coins] {
                let order = try await server.call(.POST, "/v1/orders", json: ["productId": product], headers: guest.headers)
                let token = try #require(UUID(uuidString: order["appAccountToken"] as? String ?? ""))
                let purchase = try await server.store.purchase(productId: product, account: account, appAccountToken: token)
                #expect(try await server.submit(purchase.signedTransaction, headers: guest.headers).outcome == "delivered")
                bought.append(purchase)
            }
            try await server.deliverAndApply()
            let coins = bought[1].transaction.transactionId!
            // Apple refunds the coins while they are the guest's.
            try await server.store.requestRefund(transactionId: coins)
            try await server.store.decideRefund(transactionId: coins, approve: true)
            try await server.deliverAndApply()

            let merged = try await server.call(.POST, "/v1/me/merge", json: ["guestToken": guest.token], headers: ServerHarness.userHeaders("mia"))
            #expect(merged.status == 200, "\(merged.text)")
            let subscriptions = try await server.me("mia").subscriptions
            #expect(subscriptions.map(\.originalTransactionId) == [bought[0].transaction.originalTransactionId])
            let guestMe = try await server.call(.GET, "/v1/me", headers: guest.headers)
            #expect((guestMe["subscriptions"] as? [Any])?.isEmpty == true)
            let original = try #require(bought[0].transaction.originalTransactionId)
            #expect(try await server.subscription(original)["userId"] as? String == "mia")

            // Apple reverses the refund after the merge: the coins come back to the account, not the old guest.
            let before = try await server.coins("mia")
            try await server.store.reverseRefund(transactionId: coins)
            try await server.deliverAndApply()
            #expect(try await server.coins("mia") == before + 60)
            let guestAfter = try await server.call(.GET, "/v1/me", headers: guest.headers)
            #expect((guestAfter["wallet"] as? [String: Any])?["coins"] as? Int == 0)
        }
    }

    @Test("item 8: a transfer moves the subscription record with the transaction", arguments: TestDatabase.available)
    func transferMovesSubscription(database: TestDatabase) async throws {
        try await ServerHarness.run(database, configure: { $0.transferPolicy = .transfer }) { server in
            await server.store.setDeliversNotifications(true)
            let account = try await server.store.createAccount().id
            let (_, purchase) = try await server.orderAndBuy(Self.monthly, user: "ann", account: account)
            _ = try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders("ann"))
            try await server.deliverAndApply()
            let original = try #require(purchase.transaction.originalTransactionId)
            #expect(try await server.subscription(original)["userId"] as? String == "ann")
            let moved = try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders("ben"))
            #expect(moved.delivery?["userId"] as? String == "ben", "\(moved.text)")
            #expect(try await server.subscription(original)["userId"] as? String == "ben")
            #expect(try await server.me("ben").subscriptions.count == 1)
            #expect(try await server.me("ann").subscriptions.isEmpty)
        }
    }

    @Test("item 9: expiresAt is the end of the unbroken run of grants, not of the period covering now", arguments: TestDatabase.available)
    func expiresAtCoversTheRun(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let account = try await server.store.createAccount().id
            var ends: [Date] = []
            for _ in 0..<2 {
                let (_, pass) = try await server.orderAndBuy(Self.pass, user: "pia", account: account)
                let reply = try await server.submit(pass.signedTransaction, headers: ServerHarness.userHeaders("pia"))
                let grant = try #require(reply.delivery?["grant"] as? [String: Any])
                ends.append(try #require(ISO8601DateFormatter().date(from: grant["endsAt"] as? String ?? "")))
            }
            let passEntitlement = try #require(server.entitlement("pass", of: try await server.me("pia")))
            #expect(passEntitlement.expiresAt == ends[1])

            // A subscription renewed twice, looked at inside its first period.
            await server.store.setDeliversNotifications(true)
            let (_, subscription) = try await server.orderAndBuy(PurchaseFlowTests.yearly, user: "pia", account: account)
            _ = try await server.submit(subscription.signedTransaction, headers: ServerHarness.userHeaders("pia"))
            let firstPeriod = try #require(subscription.transaction.purchaseDate)
            try await server.store.advance(by: 366 * 86_400)
            try await server.deliverAndApply()
            try await server.store.advance(by: 366 * 86_400)
            try await server.deliverAndApply()
            let latest = try await server.store.transactions(account: account)
                .filter { $0.originalTransactionId == subscription.transaction.originalTransactionId }
                .compactMap(\.expiresDate).max()
            let inside = try #require(server.entitlement("membership", of: try await server.me("pia", at: firstPeriod.addingTimeInterval(86_400))))
            #expect(inside.active)
            #expect(inside.expiresAt.map(ISO8601DateFormatter().string(from:)) == ISO8601DateFormatter().string(from: try #require(latest)))
        }
    }
}
