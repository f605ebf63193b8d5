import AsyncHTTPClient
import Foundation
import GooglePlaySimulator
import GooglePlayWire
import NIOHTTP1
import StorekeeperAPI
import StorekeeperServer
import Testing

/// Google Play purchases end to end: an Android app's submissions and Google's real-time developer notifications,
/// against the Play simulator's own records (what Google says was paid, acknowledged, consumed, refunded).
@Suite("Google Play purchases end to end")
struct GooglePlayPurchaseTests {
    static let day: TimeInterval = 86_400

    @Test("a consumable delivered once under 20 concurrent submissions, then consumed", arguments: TestDatabase.available)
    func consumableOnceAndConsumed(database: TestDatabase) async throws {
        try await PlayHarness.run(database) { harness in
            let play = harness.play
            let (orderId, obfuscated) = try await harness.order("coins_100", user: "ann")
            let account = await play.createAccount()
            let bought = try await play.buy(productId: "coins_100", account: account.id, quantity: 2, obfuscatedAccountId: obfuscated)

            let answers = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for index in 0..<20 {
                    group.addTask {
                        let reply = try await harness.submit("coins_100", token: bought.token, user: "ann", orderId: index == 0 ? orderId : nil)
                        return (reply.status, reply.text)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let bodies = answers.compactMap { try? JSONSerialization.jsonObject(with: Data($0.1.utf8)) as? [String: Any] }
            #expect(answers.allSatisfy { $0.0 == 200 } && bodies.allSatisfy { $0["outcome"] as? String == "delivered" }, "\(answers.map(\.1))")
            let deliveries = bodies.compactMap { $0["delivery"] as? [String: Any] }
            #expect(deliveries.filter { $0["alreadyDelivered"] as? Bool == false }.count == 1, "exactly one new delivery")
            #expect(Set(deliveries.compactMap { $0["transactionId"] as? String }) == [bought.orderId])
            #expect(try await harness.holdings("ann").coins == 200, "two units of 100 coins, once")

            // Google was told after the commit: consumed, so the customer can buy coins again.
            let truth = try #require(await play.purchase(bought.token))
            #expect(truth.consumed)
            let audit = try await harness.server.audit("ann")
            #expect(audit.contains { $0.action == "transaction.acknowledged" && $0.subject == bought.orderId })
            let order = try await harness.server.call(.GET, "/v1/orders/\(orderId)", headers: ServerHarness.userHeaders("ann"))
            #expect(order["status"] as? String == "delivered")
            // Priced from Google's order (two units of 0.99), proceeds after Google's 15 %.
            let earned = try await harness.server.call(.GET, "/v1/admin/users/ann/revenue", headers: ServerHarness.adminHeaders)
            let sale = (earned["transactions"] as? [[String: Any]])?.first
            #expect(sale?["customerPrice"] as? Int == 1_980 && sale?["proceeds"] as? Int == 1_683, "\(earned.text.prefix(400))")
            #expect(sale?["reason"] as? String == "googlePlay" && sale?["commissionPermille"] as? Int == 150)

            // The same token from another user changes nothing.
            let replay = try await harness.submit("coins_100", token: bought.token, user: "mallory")
            #expect(replay.status == 409 && replay.code == "owned_by_another_user", "\(replay.text)")
            #expect(try await harness.holdings("mallory").coins == 0)
            #expect(try await harness.holdings("ann").coins == 200)

            // A token Google does not know, and a package this server does not sell under: final refusals.
            let unknown = try await harness.submit("coins_100", token: "no-such-token-0123456789", user: "ann")
            #expect(unknown.status == 422 && unknown.code == "unknown_purchase_token" && unknown.outcome == "rejected", "\(unknown.text)")
            let foreign = try await harness.server.call(
                .POST,
                "/v1/purchases",
                json: ["store": "googlePlay", "packageName": "com.example.other", "productId": "coins_100", "purchaseToken": bought.token],
                headers: ServerHarness.userHeaders("ann")
            )
            #expect(foreign.code == "wrong_app" && foreign.outcome == "rejected", "\(foreign.text)")
            #expect(try await harness.holdings("ann").coins == 200)
        }
    }

    @Test("a pending purchase is refused for now, then delivered by its notification once paid", arguments: TestDatabase.available)
    func pendingThenCompleted(database: TestDatabase) async throws {
        try await PlayHarness.run(database) { harness in
            let play = harness.play
            let (_, obfuscated) = try await harness.order("lifetime_pro", user: "bo")
            let account = await play.createAccount()
            let pending = try await play.buy(productId: "lifetime_pro", account: account.id, obfuscatedAccountId: obfuscated, pending: true)
            let early = try await harness.submit("lifetime_pro", token: pending.token, user: "bo")
            #expect(early.status == 422 && early.code == "purchase_pending" && early.outcome == "retry", "\(early.text)")
            #expect(try await harness.holdings("bo").entitlements.isEmpty)

            try await play.completePending(pending.token)
            #expect(try await harness.pushAndApply() == 1)
            #expect(try await harness.holdings("bo").entitlements == ["chapter.2"], "delivered by the notification, to the order's user")
            let earned = try await harness.server.call(.GET, "/v1/admin/users/bo/revenue", headers: ServerHarness.adminHeaders)
            #expect((earned["transactions"] as? [[String: Any]])?.first?["customerPrice"] as? Int == 24_990, "priced from Google's order")
            // The job acknowledges what the notification delivered.
            try await harness.server.runJob("acknowledge-purchases", now: await play.now)
            #expect(await play.purchase(pending.token)?.acknowledged == true)
            // The app submitting it afterwards is answered as already delivered.
            let late = try await harness.submit("lifetime_pro", token: pending.token, user: "bo")
            #expect(late.status == 200 && late.delivery?["alreadyDelivered"] as? Bool == true, "\(late.text)")
        }
    }

    @Test("an acknowledgement outage longer than a day is caught up before Google's deadline", arguments: TestDatabase.available)
    func acknowledgementOutage(database: TestDatabase) async throws {
        try await PlayHarness.run(database) { harness in
            let play = harness.play
            let (_, obfuscated) = try await harness.order("lifetime_pro", user: "cy")
            let account = await play.createAccount()
            await play.setFaults([.acknowledge])
            let bought = try await play.buy(productId: "lifetime_pro", account: account.id, obfuscatedAccountId: obfuscated)
            let reply = try await harness.submit("lifetime_pro", token: bought.token, user: "cy")
            #expect(reply.status == 200 && reply.outcome == "delivered", "delivered although Google cannot take the acknowledgement: \(reply.text)")
            #expect(await play.purchase(bought.token)?.acknowledged == false)

            // A day and a half of outage: the job keeps trying, and raises the alarm once the deadline is two days off.
            await play.advance(by: 1.5 * Self.day)
            #expect(try await harness.server.runJob("acknowledge-purchases", now: await play.now) == 0)
            let metrics = try await harness.server.call(.GET, "/metrics", headers: ServerHarness.adminHeaders)
            #expect(metrics.text.contains("storekeeper_acknowledgements_due{urgency=\"at_risk\"} 1"), "\(metrics.text.prefix(200))")

            await play.setFaults([])
            #expect(try await harness.server.runJob("acknowledge-purchases", now: await play.now) == 1)
            let exposition = MonitoringTests.Exposition(try await harness.server.call(.GET, "/metrics", headers: ServerHarness.adminHeaders).text)
            for family in ServerMetrics.googlePlayFamilies {
                #expect(exposition.types[family.name] == family.kind.rawValue, "\(family.name) is not exported as a \(family.kind)")
            }
            #expect(exposition.value("storekeeper_purchases_acknowledged_total", ["result": "acknowledged"]) == 1)
            #expect(exposition.value("storekeeper_purchases_acknowledged_total", ["result": "failed"]) >= 2, "the purchase path's try and the job's")
            #expect(exposition.value("storekeeper_acknowledgements_due", ["urgency": "at_risk"]) == 1, "as the job found them before acknowledging")
            #expect(await play.purchase(bought.token)?.acknowledged == true)
            // Past the three days, Google keeps it: nothing voided, the user keeps the unlock.
            await play.advance(by: 2 * Self.day)
            #expect(await play.purchase(bought.token)?.state == .purchased)
            #expect(try await harness.holdings("cy").entitlements == ["chapter.2"])
            #expect(try await harness.server.runJob("acknowledge-purchases", now: await play.now) == 0, "nothing left to acknowledge")
        }
    }

    @Test("a refund Google pushes is clawed back", arguments: TestDatabase.available)
    func refundClawedBack(database: TestDatabase) async throws {
        try await PlayHarness.run(database) { harness in
            let play = harness.play
            let (_, obfuscated) = try await harness.order("coins_100", user: "di")
            let account = await play.createAccount()
            let bought = try await play.buy(productId: "coins_100", account: account.id, quantity: 2, obfuscatedAccountId: obfuscated)
            #expect(try await harness.submit("coins_100", token: bought.token, user: "di").status == 200)
            #expect(try await harness.pushAndApply() == 1, "the purchase notification (already delivered)")
            #expect(try await harness.holdings("di").coins == 200)

            try await play.refund(packageName: PlayHarness.packageName, orderId: bought.orderId, revoke: true, quantity: 1)
            #expect(try await harness.pushAndApply() == 1)
            #expect(try await harness.holdings("di").coins == 100, "one of the two units refunded")
            let audit = try await harness.server.audit("di")
            #expect(audit.contains { $0.action == "wallet.debited" })
        }
    }

    @Test("a refund whose notification never came is found by catch-up and clawed back", arguments: TestDatabase.available)
    func voidedFoundByCatchUp(database: TestDatabase) async throws {
        try await PlayHarness.run(database) { harness in
            let play = harness.play
            let (_, obfuscated) = try await harness.order("coins_100", user: "hal")
            let account = await play.createAccount()
            let bought = try await play.buy(productId: "coins_100", account: account.id, obfuscatedAccountId: obfuscated)
            #expect(try await harness.submit("coins_100", token: bought.token, user: "hal").status == 200)
            #expect(try await harness.holdings("hal").coins == 100)

            // Pub/Sub loses the refund's notification (the push subscription was gone for a while).
            await play.configurePush(nil)
            try await play.refund(packageName: PlayHarness.packageName, orderId: bought.orderId, revoke: true)
            #expect(try await harness.pushAndApply() == 0)
            #expect(try await harness.holdings("hal").coins == 100)

            #expect(try await harness.server.runJob("play-catch-up", now: await play.now) == 1)
            try await harness.server.runJob("process-notifications", now: Date())
            #expect(try await harness.holdings("hal").coins == 0, "clawed back as the notification would have")
            #expect(try await harness.server.runJob("play-catch-up", now: await play.now) == 0, "each voided purchase is stored once")
            let audit = try await harness.server.audit("hal")
            #expect(audit.contains { $0.action == "wallet.debited" }, "\(audit.map(\.action))")
        }
    }

    @Test("support finds a Play customer by order id and by purchase token", arguments: TestDatabase.available)
    func consoleFindsPlayPurchases(database: TestDatabase) async throws {
        try await PlayHarness.run(database, configure: ConsoleTests.configure) { harness in
            let play = harness.play
            let (_, obfuscated) = try await harness.order("lifetime_pro", user: "ivy")
            let account = await play.createAccount()
            let bought = try await play.buy(productId: "lifetime_pro", account: account.id, obfuscatedAccountId: obfuscated)
            #expect(try await harness.submit("lifetime_pro", token: bought.token, user: "ivy").status == 200)
            try await ConsoleTests.browse(harness.server) { support in
                #expect(try await support.signIn("sam", ConsoleTests.operators[1].2).status == 303)
                let byOrder = try await support.get("/admin/find?q=\(bought.orderId)")
                #expect(byOrder.text.contains("href=\"/admin/customers/ivy\""), "\(byOrder.text.prefix(300))")
                let byToken = try await support.get("/admin/find?q=\(bought.token)")
                #expect(byToken.text.contains("href=\"/admin/customers/ivy\"") && byToken.text.contains("Google Play purchase token"))
                let page = try await support.get("/admin/customers/ivy")
                #expect(page.status == 200 && page.text.contains(bought.orderId))
            }
        }
    }

    @Test("forty notifications in one batch are confirmed with Google side by side and all applied", arguments: TestDatabase.available)
    func aBatchOfNotifications(database: TestDatabase) async throws {
        try await PlayHarness.run(database) { harness in
            let play = harness.play
            let (_, obfuscated) = try await harness.order("coins_100", user: "lou")
            let account = await play.createAccount()
            for _ in 0..<40 { _ = try await play.buy(productId: "coins_100", account: account.id, obfuscatedAccountId: obfuscated) }
            #expect(try await harness.sender.deliverDue() == 40)
            // One pass of the processor: the batch holds all forty, more than it confirms at once.
            try await harness.server.runJob("process-notifications", now: Date())
            #expect(try await harness.holdings("lou").coins == 4_000, "each purchase once, delivered by its notification")
            let summary = try await harness.server.call(.GET, "/v1/admin/notifications/summary", headers: ServerHarness.adminHeaders)
            #expect((summary["counts"] as? [String: Any])?["processed"] as? Int == 40, "\(summary.text)")
        }
    }
}
