import Foundation
import GooglePlaySimulator
import GooglePlayWire
import NIOHTTP1
import StorekeeperServer
import Testing

/// Google Play sales reconciled against the simulator's earnings reports: Google's books (every charge, fee and
/// refund it booked) against what Storekeeper delivered and took back, order by order.
@Suite("Google Play reconciliation against earnings reports")
struct GooglePlayReconciliationTests {
    static func month(of date: Date) -> (name: String, end: Date) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        let parts = calendar.dateComponents([.year, .month], from: date)
        let start = calendar.date(from: DateComponents(year: parts.year, month: parts.month, day: 1))!
        return (String(format: "%04d-%02d", parts.year!, parts.month!), calendar.date(byAdding: .month, value: 1, to: start)!)
    }

    @Test("a month's orders match Google's books; a lost order and a refund left with the user are found", arguments: TestDatabase.available)
    func monthAgainstEarnings(database: TestDatabase) async throws {
        try await PlayHarness.run(database) { harness in
            let play = harness.play
            // Orders in the month's last hours may be booked in the next month's report: start clear of them.
            if await Self.month(of: play.now).end.timeIntervalSince(play.now) < 4 * 3_600 { await play.advance(by: 5 * 3_600) }
            let (month, end) = Self.month(of: await play.now)

            func bought(_ product: String, _ user: String, tester: Bool = false) async throws -> SimulatedPlayStore.OneTimePurchase {
                let (_, obfuscated) = try await harness.order(product, user: user)
                let account = await play.createAccount(licenseTester: tester)
                return try await play.buy(productId: product, account: account.id, obfuscatedAccountId: obfuscated)
            }
            let coins = try await bought("coins_100", "ann")
            #expect(try await harness.submit("coins_100", token: coins.token, user: "ann").outcome == "delivered")
            let refunded = try await bought("lifetime_pro", "bo")
            #expect(try await harness.submit("lifetime_pro", token: refunded.token, user: "bo").outcome == "delivered")
            let kept = try await bought("coins_100", "cy")
            #expect(try await harness.submit("coins_100", token: kept.token, user: "cy").outcome == "delivered")
            // Paid and acknowledged on the device, never sent to the server, its notification lost: a lost order.
            await play.configurePush(nil)
            let lost = try await bought("lifetime_pro", "dee")
            try await play.acknowledge(packageName: PlayHarness.packageName, productId: "lifetime_pro", token: lost.token, developerPayload: nil)
            await play.configurePush(
                .init(
                    endpoint: harness.server.serverURL + "/google/rtdn",
                    audience: PlayHarness.pushAudience,
                    serviceAccountEmail: PlayHarness.pushAccount
                )
            )
            // A license tester pays nothing: delivered as a test purchase, in no report.
            let test = try await bought("coins_100", "tess", tester: true)
            #expect(try await harness.submit("coins_100", token: test.token, user: "tess").outcome == "delivered")
            let (_, obfuscated) = try await harness.order("vip_monthly", user: "eve")
            let subscription = try await play.subscribe(
                productId: "vip_monthly",
                account: await play.createAccount().id,
                obfuscatedAccountId: obfuscated
            )
            #expect(try await harness.submit("vip_monthly", token: subscription.token, user: "eve").outcome == "delivered")
            try await harness.pushAndApply()

            // The developer refunds one order with revoke (Storekeeper takes it back), one without (the user keeps it).
            try await play.refund(packageName: PlayHarness.packageName, orderId: refunded.orderId, revoke: true)
            try await play.refund(packageName: PlayHarness.packageName, orderId: kept.orderId, revoke: false)
            try await harness.pushAndApply()
            #expect(try await harness.holdings("bo").entitlements.isEmpty)

            // Google publishes a month's report once the month is over.
            let early = try await harness.server.call(
                .POST,
                "/v1/admin/reconciliation/google-play/\(month)/run",
                headers: ServerHarness.adminHeaders
            )
            let earlyDay = (early["days"] as? [[String: Any]])?.first
            #expect(earlyDay?["status"] as? String == "not_available" && earlyDay?["day"] as? String == "play:\(month)", "\(early.text)")

            await play.advance(by: end.timeIntervalSince(await play.now) + 3_600)
            try await harness.pushAndApply()
            let ledger = await play.allEarnings()
            #expect(ledger.filter { $0.type == .charge }.count == 5, "ann, bo, cy, dee and eve paid; the tester did not")
            #expect(ledger.filter { $0.type == .chargeRefund }.map(\.orderId) == [refunded.orderId, kept.orderId], "\(ledger)")

            let run = try await harness.server.call(.POST, "/v1/admin/reconciliation/google-play/\(month)/run", headers: ServerHarness.adminHeaders)
            #expect(run.status == 200, "\(run.text)")
            let day = try #require((run["days"] as? [[String: Any]])?.first)
            #expect(day["status"] as? String == "reconciled", "\(run.text)")
            #expect(day["appleUnits"] as? Int == 5 && day["storekeeperUnits"] as? Int == 4, "orders Google charged, orders delivered: \(day)")
            #expect(day["appleRefunds"] as? Int == 2 && day["storekeeperRefunds"] as? Int == 1, "\(day)")
            let findings = try #require(run["findings"] as? [[String: Any]])
            let found = Set(findings.map { "\($0["kind"] as? String ?? "?") \(($0["transactionIds"] as? [String])?.first ?? "?")" })
            #expect(found == ["google_only \(lost.orderId)", "refund_not_clawed_back \(kept.orderId)"], "\(run.text)")
            let lostFinding = try #require(findings.first { $0["kind"] as? String == "google_only" })
            #expect(lostFinding["productId"] as? String == "lifetime_pro" && lostFinding["storefront"] as? String == "USA")
            #expect(lostFinding["appleAmount"] as? Int == 24_990 && lostFinding["currency"] as? String == "USD")

            // Support recovers the lost order with its token; the month reconciled again is clean of it.
            #expect(try await harness.submit("lifetime_pro", token: lost.token, user: "dee").outcome == "delivered")
            let again = try await harness.server.call(.POST, "/v1/admin/reconciliation/google-play/\(month)/run", headers: ServerHarness.adminHeaders)
            let left = (again["findings"] as? [[String: Any]])?.compactMap { $0["kind"] as? String }
            #expect(left == ["refund_not_clawed_back"], "\(again.text)")

            // The month is listed beside Apple's days, and its findings filter by kind.
            let listed = try await harness.server.call(
                .GET,
                "/v1/admin/reconciliation?from=\(month)-01&to=\(Self.month(of: end.addingTimeInterval(3_600)).name)-01&kind=refund_not_clawed_back",
                headers: ServerHarness.adminHeaders
            )
            #expect((listed["days"] as? [[String: Any]])?.contains { $0["day"] as? String == "play:\(month)" } == true, "\(listed.text)")
            #expect((listed["findings"] as? [[String: Any]])?.count == 1, "\(listed.text)")

            // Cloud Storage down: the run says so, and the month's last reconciliation stands.
            await play.setFaults([.reports])
            let failed = try await harness.server.call(
                .POST,
                "/v1/admin/reconciliation/google-play/\(month)/run",
                headers: ServerHarness.adminHeaders
            )
            #expect((failed["days"] as? [[String: Any]])?.first?["status"] as? String == "failed", "\(failed.text)")
            await play.setFaults([])
            let kept2 = try await harness.server.call(
                .GET,
                "/v1/admin/reconciliation?from=\(month)-01&to=\(Self.month(of: end.addingTimeInterval(3_600)).name)-01",
                headers: ServerHarness.adminHeaders
            )
            let stored = (kept2["days"] as? [[String: Any]])?.first { $0["day"] as? String == "play:\(month)" }
            #expect(stored?["status"] as? String == "reconciled" && stored?["findings"] as? Int == 1, "\(kept2.text)")

            // The daily job covers the two months before its clock's: this one reconciled, the one before not published.
            #expect(try await harness.server.runJob("play-reconciliation", now: await play.now) == 1)
            let bad = try await harness.server.call(.POST, "/v1/admin/reconciliation/google-play/2026-13/run", headers: ServerHarness.adminHeaders)
            #expect(bad.status == 400 && bad.code == "invalid_month", "\(bad.text)")
        }
    }

    @Test("Google's 30 % tier past the year's first million: proceeds from Google's order, and the month agrees", arguments: TestDatabase.available)
    func upperFeeTier(database: TestDatabase) async throws {
        try await PlayHarness.run(database) { harness in
            let play = harness.play
            if await Self.month(of: play.now).end.timeIntervalSince(play.now) < 4 * 3_600 { await play.advance(by: 5 * 3_600) }
            let (month, end) = Self.month(of: await play.now)
            // The simulator's million, lowered to $20: the first unlock is within it, the second past it.
            await play.setFeeTierThreshold(20_000)
            var orders: [String] = []
            for user in ["mo", "ned"] {
                let (_, obfuscated) = try await harness.order("lifetime_pro", user: user)
                let bought = try await play.buy(productId: "lifetime_pro", account: await play.createAccount().id, obfuscatedAccountId: obfuscated)
                #expect(try await harness.submit("lifetime_pro", token: bought.token, user: user).outcome == "delivered")
                orders.append(bought.orderId)
            }
            let (_, obfuscated) = try await harness.order("vip_monthly", user: "ole")
            let sub = try await play.subscribe(productId: "vip_monthly", account: await play.createAccount().id, obfuscatedAccountId: obfuscated)
            #expect(try await harness.submit("vip_monthly", token: sub.token, user: "ole").outcome == "delivered")
            let fees = await play.allEarnings().filter { $0.type == .googleFee }.map { -$0.buyerAmount }
            #expect(fees == [3_748, 7_497, 748], "15 %, then 30 % past the threshold; subscriptions 15 % either way")

            // Revenue takes each order's fee from Google's order: 15 %, then 30 %.
            for (user, permille, proceeds) in [("mo", 150, 24_990 - 3_748), ("ned", 300, 24_990 - 7_497), ("ole", 150, 4_990 - 748)] {
                let revenue = try await harness.server.call(.GET, "/v1/admin/users/\(user)/revenue", headers: ServerHarness.adminHeaders)
                let sale = (revenue["transactions"] as? [[String: Any]])?.first
                #expect(
                    sale?["commissionPermille"] as? Int == permille && sale?["proceeds"] as? Int == proceeds,
                    "\(user): \(revenue.text.prefix(400))"
                )
            }

            await play.advance(by: end.timeIntervalSince(await play.now) + 3_600)
            try await harness.pushAndApply()
            let run = try await harness.server.call(.POST, "/v1/admin/reconciliation/google-play/\(month)/run", headers: ServerHarness.adminHeaders)
            let day = (run["days"] as? [[String: Any]])?.first
            #expect(day?["status"] as? String == "reconciled" && day?["findings"] as? Int == 0, "Google's books and Storekeeper's agree: \(run.text)")
        }
    }
}
