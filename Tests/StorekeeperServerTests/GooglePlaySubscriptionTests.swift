import AppStoreSimulator
import Foundation
import GooglePlaySimulator
import GooglePlayWire
import NIOHTTP1
import StorekeeperAPI
import StorekeeperServer
import Testing

/// Google Play subscriptions followed through real-time developer notifications, against the Play simulator's ground
/// truth after every step: renewals, a grace period, an account hold, recoveries, and changes of plan that replace
/// the purchase token.
@Suite("Google Play subscriptions end to end")
struct GooglePlaySubscriptionTests {
    static let day: TimeInterval = 86_400

    /// Pushes what is due, applies it, and expects the server's membership to be Google's.
    static func step(
        _ harness: PlayHarness,
        user: String,
        token: String,
        _ comment: String,
        sourceLocation: SourceLocation = #_sourceLocation
    )
        async throws
    {
        try await harness.pushAndApply()
        let truth = await harness.play.subscription(token)?.state.grantsAccess ?? false
        let server = try await harness.holdings(user).entitlements.contains("membership")
        #expect(server == truth, "\(comment): server \(server), Google \(truth)", sourceLocation: sourceLocation)
    }

    @Test("a year of renewals with a grace period, an account hold and a recovery", arguments: TestDatabase.available)
    func yearWithGraceAndHold(database: TestDatabase) async throws {
        try await PlayHarness.run(database) { harness in
            let play = harness.play
            let (_, obfuscated) = try await harness.order("vip_monthly", user: "eve")
            let account = await play.createAccount()
            let sub = try await play.subscribe(productId: "vip_monthly", account: account.id, obfuscatedAccountId: obfuscated, trial: true)
            try await Self.step(harness, user: "eve", token: sub.token, "trial started")
            #expect(try await harness.holdings("eve").entitlements == ["membership"])
            #expect(await play.subscription(sub.token)?.acknowledged == true, "acknowledged within Google's three days")
            var state = try await harness.server.subscription(sub.firstOrderId)
            #expect(state["state"] as? String == "active")
            #expect(state["userId"] as? String == "eve")
            #expect(state["offerType"] as? Int == 1, "the free trial")

            // The trial ends and the paid months renew.
            await play.advance(by: 7 * Self.day)
            try await Self.step(harness, user: "eve", token: sub.token, "first paid month")
            for month in 1...3 {
                await play.advance(by: 31 * Self.day)
                try await Self.step(harness, user: "eve", token: sub.token, "renewal \(month)")
            }
            // A declined renewal: service goes on through the grace period, and the card is fixed within it.
            await play.setBillingFails(true, account: account.id)
            try await harness.advance(token: sub.token, until: .inGracePeriod)
            try await Self.step(harness, user: "eve", token: sub.token, "grace period")
            state = try await harness.server.subscription(sub.firstOrderId)
            #expect(state["state"] as? String == "grace_period")
            #expect(try await harness.holdings("eve").entitlements == ["membership"], "access kept in grace")
            await play.setBillingFails(false, account: account.id)
            try await harness.advance(token: sub.token, until: .active)
            try await Self.step(harness, user: "eve", token: sub.token, "recovered in grace")
            #expect(try await harness.server.subscription(sub.firstOrderId)["state"] as? String == "active")
            // Declined again, past the grace period into account hold: no access until the recovery.
            await play.setBillingFails(true, account: account.id)
            try await harness.advance(token: sub.token, until: .inGracePeriod)
            try await Self.step(harness, user: "eve", token: sub.token, "grace again")
            try await harness.advance(token: sub.token, until: .onHold)
            try await Self.step(harness, user: "eve", token: sub.token, "account hold")
            state = try await harness.server.subscription(sub.firstOrderId)
            #expect(state["state"] as? String == "billing_retry")
            #expect(try await harness.holdings("eve").entitlements.isEmpty, "no access on hold")
            await play.setBillingFails(false, account: account.id)
            try await harness.advance(token: sub.token, until: .active)
            try await Self.step(harness, user: "eve", token: sub.token, "recovered from hold")
            #expect(try await harness.server.subscription(sub.firstOrderId)["state"] as? String == "active")
            // The rest of the year.
            for month in 1...6 {
                await play.advance(by: 31 * Self.day)
                try await Self.step(harness, user: "eve", token: sub.token, "late renewal \(month)")
            }
            let me = try await harness.server.me("eve", at: await play.now)
            let orders = Set(me.transactions.map(\.transactionId))
            #expect(orders.contains(sub.firstOrderId) && orders.count >= 10, "the purchase and its renewals: \(orders.sorted())")
            #expect(me.transactions.allSatisfy { $0.originalTransactionId == sub.firstOrderId }, "one subscription")
            #expect(me.transactions.allSatisfy { $0.source == .storeAPI })

            // Money: the paid periods at the plan's price, Google's 15 % fee taken (the free week is a free unit).
            let started = sub.startTime
            let days = DateFormatter()
            days.dateFormat = "yyyy-MM-dd"
            days.timeZone = TimeZone(identifier: "UTC")
            days.locale = Locale(identifier: "en_US_POSIX")
            let revenue = try await harness.server.call(
                .GET,
                "/v1/admin/reports/revenue?from=\(days.string(from: started))&to=\(days.string(from: started.addingTimeInterval(365 * Self.day)))",
                headers: ServerHarness.adminHeaders
            )
            let lines = (revenue["lines"] as? [[String: Any]] ?? []).filter { $0["productId"] as? String == "vip_monthly" }
            let gross = lines.compactMap { $0["gross"] as? Int }.reduce(0, +)
            let proceeds = lines.compactMap { $0["proceeds"] as? Int }.reduce(0, +)
            let paid = lines.compactMap { $0["units"] as? Int }.reduce(0, +)
            #expect(lines.compactMap { $0["freeUnits"] as? Int }.reduce(0, +) == 1, "the free week")
            #expect(paid >= 9 && gross == paid * 4_990, "\(revenue.text.prefix(400))")
            #expect(abs(proceeds - gross * 85 / 100) <= paid, "Google's 15 %, not Apple's 30 %: \(proceeds) of \(gross)")
            let earned = try await harness.server.call(.GET, "/v1/admin/users/eve/revenue", headers: ServerHarness.adminHeaders)
            let reasons = Set((earned["transactions"] as? [[String: Any]] ?? []).compactMap { $0["reason"] as? String })
            #expect(reasons == ["googlePlay"], "\(earned.text.prefix(300))")

            // The customer cancels: access to the end of the paid period, then nothing.
            try await play.cancelSubscription(token: sub.token)
            try await Self.step(harness, user: "eve", token: sub.token, "cancelled")
            #expect(try await harness.server.subscription(sub.firstOrderId)["autoRenew"] as? Bool == false)
            await play.advance(by: 32 * Self.day)
            try await Self.step(harness, user: "eve", token: sub.token, "expired")
            #expect(try await harness.server.subscription(sub.firstOrderId)["state"] as? String == "expired")
        }
    }

    @Test("an upgrade and a downgrade keep one subscription across three purchase tokens", arguments: TestDatabase.available)
    func upgradeAndDowngrade(database: TestDatabase) async throws {
        try await PlayHarness.run(database) { harness in
            let play = harness.play
            let (_, obfuscated) = try await harness.order("vip_monthly", user: "fay")
            let account = await play.createAccount()
            let monthly = try await play.subscribe(productId: "vip_monthly", account: account.id, obfuscatedAccountId: obfuscated)
            try await Self.step(harness, user: "fay", token: monthly.token, "subscribed")
            await play.advance(by: 10 * Self.day)

            let yearly = try await play.changePlan(from: monthly.token, to: "vip_yearly", mode: .chargeFullPrice)
            try await Self.step(harness, user: "fay", token: yearly.token, "upgraded")
            var state = try await harness.server.subscription(monthly.firstOrderId)
            #expect(state["productId"] as? String == "vip_yearly", "the chain keeps its first order id: \(state)")
            #expect(state["latestTransactionId"] as? String == yearly.firstOrderId)
            await play.advance(by: 40 * Self.day)
            let back = try await play.changePlan(from: yearly.token, to: "vip_monthly", mode: .withoutProration)
            try await Self.step(harness, user: "fay", token: back.token, "downgraded")
            state = try await harness.server.subscription(monthly.firstOrderId)
            #expect(state["productId"] as? String == "vip_monthly")

            // Every token of the chain is acknowledged, so Google refunds none of them.
            for token in [monthly.token, yearly.token, back.token] {
                #expect(await play.subscription(token)?.acknowledged == true)
            }
            await play.advance(by: 4 * Self.day)
            try await Self.step(harness, user: "fay", token: back.token, "after Google's deadline")
            let me = try await harness.server.me("fay", at: await play.now)
            #expect(Set(me.transactions.map(\.originalTransactionId)) == [monthly.firstOrderId], "one subscription across three tokens")
            #expect(me.subscriptions.count == 1)
        }
    }

    @Test("a pause takes access away until the subscription resumes, on its date or early, charged again", arguments: TestDatabase.available)
    func pauseAndResume(database: TestDatabase) async throws {
        try await PlayHarness.run(database) { harness in
            let play = harness.play
            let (_, obfuscated) = try await harness.order("vip_monthly", user: "gus")
            let sub = try await play.subscribe(productId: "vip_monthly", account: await play.createAccount().id, obfuscatedAccountId: obfuscated)
            try await Self.step(harness, user: "gus", token: sub.token, "subscribed")
            try await play.schedulePause(token: sub.token, months: 2)
            try await Self.step(harness, user: "gus", token: sub.token, "pause scheduled: still paid for")
            #expect(try await harness.holdings("gus").entitlements == ["membership"])

            try await harness.advance(token: sub.token, until: .paused)
            try await Self.step(harness, user: "gus", token: sub.token, "paused")
            #expect(try await harness.holdings("gus").entitlements.isEmpty, "no access while paused")
            var state = try await harness.server.subscription(sub.firstOrderId)
            #expect(state["state"] as? String == "paused", "\(state)")
            let resumes = try #require(await play.subscription(sub.token)?.resumesAt)
            #expect(resumes.timeIntervalSince(await play.now) > 50 * Self.day, "two months from the end of the paid month")

            try await harness.advance(token: sub.token, until: .active, days: 70)
            try await Self.step(harness, user: "gus", token: sub.token, "resumed on its date")
            state = try await harness.server.subscription(sub.firstOrderId)
            #expect(state["state"] as? String == "active" && state["latestTransactionId"] as? String == "\(sub.firstOrderId)..0", "\(state)")

            // Paused again, and resumed early by the subscriber: charged at once, a new month from then.
            try await play.schedulePause(token: sub.token, months: 1)
            try await harness.advance(token: sub.token, until: .paused)
            try await Self.step(harness, user: "gus", token: sub.token, "paused again")
            await play.advance(by: 3 * Self.day)
            try await play.resume(token: sub.token)
            try await Self.step(harness, user: "gus", token: sub.token, "resumed early")
            let record = try #require(await play.subscription(sub.token))
            let now = await play.now
            #expect(record.state == .active && record.expiryTime.timeIntervalSince(now) > 27 * Self.day)
            let me = try await harness.server.me("gus", at: await play.now)
            #expect(me.transactions.map(\.transactionId).sorted() == [sub.firstOrderId, "\(sub.firstOrderId)..0", "\(sub.firstOrderId)..1"])
            let charges = await play.allEarnings().filter { $0.type == .charge }.map(\.orderId)
            #expect(charges == [sub.firstOrderId, "\(sub.firstOrderId)..0", "\(sub.firstOrderId)..1"], "nothing charged while paused")
        }
    }

    @Test(
        "a price increase renews those who accept it at the new price and ends the rest; a decrease just applies",
        arguments: TestDatabase.available
    )
    func priceChanges(database: TestDatabase) async throws {
        try await PlayHarness.run(database) { harness in
            let play = harness.play
            var subs: [String: SimulatedPlayStore.SubscriptionRecord] = [:]
            for user in ["hal", "ivy"] {
                let (_, obfuscated) = try await harness.order("vip_monthly", user: user)
                subs[user] = try await play.subscribe(
                    productId: "vip_monthly",
                    account: await play.createAccount().id,
                    obfuscatedAccountId: obfuscated
                )
                try await Self.step(harness, user: user, token: subs[user]!.token, "\(user) subscribed")
            }
            let (hal, ivy) = (subs["hal"]!, subs["ivy"]!)
            #expect(try await play.changePrice(productId: "vip_monthly", to: 5_990) == 2)
            try await play.acceptPriceChange(token: hal.token)
            try await Self.step(harness, user: "hal", token: hal.token, "hal accepted")
            try await Self.step(harness, user: "ivy", token: ivy.token, "ivy was told")
            let told = try await harness.server.subscription(ivy.firstOrderId)
            #expect(told["state"] as? String == "active", "\(told)")

            await play.advance(by: 32 * Self.day)
            try await Self.step(harness, user: "hal", token: hal.token, "hal renewed at the new price")
            try await Self.step(harness, user: "ivy", token: ivy.token, "ivy's subscription ended at the renewal")
            #expect(await play.subscription(ivy.token)?.state == .expired)
            #expect(try await harness.holdings("ivy").entitlements.isEmpty)
            func prices(_ user: String) async throws -> [Int] {
                let revenue = try await harness.server.call(.GET, "/v1/admin/users/\(user)/revenue", headers: ServerHarness.adminHeaders)
                return ((revenue["transactions"] as? [[String: Any]]) ?? []).compactMap { $0["customerPrice"] as? Int }.sorted()
            }
            #expect(try await prices("hal") == [4_990, 5_990], "each period at what Google charged for it")
            #expect(try await prices("ivy") == [4_990])

            // A decrease needs no one's consent.
            #expect(try await play.changePrice(productId: "vip_monthly", to: 3_990) == 1)
            await play.advance(by: 31 * Self.day)
            try await Self.step(harness, user: "hal", token: hal.token, "hal renewed at the lower price")
            let lowered = try await prices("hal")
            let books = await play.allEarnings().map { "\($0.orderId) \($0.type) \($0.buyerAmount)" }
            let delivered = try await harness.server.me("hal", at: await play.now).transactions.map(\.transactionId)
            #expect(lowered == [3_990, 4_990, 5_990], "\(books) \(delivered)")
        }
    }

    @Test("a re-subscription bought outside the app after expiry goes to the same user, in the same subscription", arguments: TestDatabase.available)
    func resubscribedOutsideTheApp(database: TestDatabase) async throws {
        try await PlayHarness.run(database) { harness in
            let play = harness.play
            let (_, obfuscated) = try await harness.order("vip_monthly", user: "jo")
            let first = try await play.subscribe(productId: "vip_monthly", account: await play.createAccount().id, obfuscatedAccountId: obfuscated)
            try await Self.step(harness, user: "jo", token: first.token, "subscribed")
            try await play.cancelSubscription(token: first.token)
            try await harness.advance(token: first.token, until: .expired)
            try await Self.step(harness, user: "jo", token: first.token, "expired")
            #expect(try await harness.holdings("jo").entitlements.isEmpty)

            // Weeks later, in the Play Store's subscriptions center: no app, no account id, only the expired token.
            await play.advance(by: 20 * Self.day)
            let again = try await play.resubscribe(after: first.token)
            let seen = try await harness.play.subscriptionPurchase(packageName: PlayHarness.packageName, token: again.token)
            #expect(seen.externalAccountIdentifiers == nil && seen.outOfAppPurchaseContext?.expiredPurchaseToken == first.token)
            try await Self.step(harness, user: "jo", token: again.token, "re-subscribed outside the app")
            #expect(try await harness.holdings("jo").entitlements == ["membership"])
            #expect(await play.subscription(again.token)?.acknowledged == true, "acknowledged, so Google keeps it")
            let me = try await harness.server.me("jo", at: await play.now)
            #expect(Set(me.transactions.map(\.originalTransactionId)) == [first.firstOrderId], "one subscription, as the App Store keeps it")
            #expect(me.transactions.contains { $0.transactionId == again.firstOrderId })
            let state = try await harness.server.subscription(first.firstOrderId)
            #expect(state["state"] as? String == "active" && state["latestTransactionId"] as? String == again.firstOrderId, "\(state)")
        }
    }

    @Test("a license tester's subscription renews every five minutes, six times, as Sandbox and out of revenue", arguments: TestDatabase.available)
    func acceleratedTestSubscription(database: TestDatabase) async throws {
        try await PlayHarness.run(database) { harness in
            let play = harness.play
            let (_, obfuscated) = try await harness.order("vip_monthly", user: "tess")
            let tester = await play.createAccount(licenseTester: true)
            let sub = try await play.subscribe(productId: "vip_monthly", account: tester.id, obfuscatedAccountId: obfuscated)
            #expect(sub.expiryTime.timeIntervalSince(sub.startTime) == 300, "a month is five minutes for a tester")
            try await Self.step(harness, user: "tess", token: sub.token, "tester subscribed")
            for renewal in 1...SimulatedPlayStore.testRenewalLimit {
                await play.advance(by: 300)
                try await Self.step(harness, user: "tess", token: sub.token, "renewal \(renewal)")
                #expect(await play.subscription(sub.token)?.renewals == renewal)
            }
            let me = try await harness.server.me("tess", at: await play.now)
            #expect(me.transactions.count == 7 && me.transactions.allSatisfy { $0.sandbox && $0.environment == "Sandbox" }, "\(me.transactions)")
            await play.advance(by: 300)
            try await Self.step(harness, user: "tess", token: sub.token, "no seventh renewal")
            #expect(await play.subscription(sub.token)?.state == .expired)
            #expect(await play.allEarnings().isEmpty, "a tester pays nothing")
            let revenue = try await harness.server.call(.GET, "/v1/admin/users/tess/revenue", headers: ServerHarness.adminHeaders)
            let counted = ((revenue["transactions"] as? [[String: Any]]) ?? []).filter { $0["counted"] as? Bool == true }
            #expect(counted.isEmpty, "test purchases are kept out of revenue: \(revenue.text.prefix(300))")
        }
    }

    @Test(
        "a prepaid plan and its top-up: access to the end of the extended period, each charge priced, then expiry",
        arguments: TestDatabase.available
    )
    func prepaidPlanAndTopUp(database: TestDatabase) async throws {
        try await PlayHarness.run(database) { harness in
            let play = harness.play
            let saved = try await harness.server.call(
                .PUT,
                "/v1/admin/catalog/products/vip_pass",
                json: [
                    "id": "vip_pass", "store": "googlePlay", "kind": "autoRenewable", "entitlement": "membership", "subscriptionGroup": "play.pass",
                ],
                headers: ServerHarness.adminHeaders
            )
            #expect(saved.status == 200, "\(saved.text)")
            let (_, obfuscated) = try await harness.order("vip_pass", user: "kit")
            let pass = try await play.subscribe(productId: "vip_pass", account: await play.createAccount().id, obfuscatedAccountId: obfuscated)
            #expect(try await harness.submit("vip_pass", token: pass.token, user: "kit").outcome == "delivered")
            try await Self.step(harness, user: "kit", token: pass.token, "a month's pass")
            let seen = try await play.subscriptionPurchase(packageName: PlayHarness.packageName, token: pass.token)
            #expect(seen.lineItems?.first?.prepaidPlan != nil && seen.lineItems?.first?.autoRenewingPlan == nil)

            await play.advance(by: 20 * Self.day)
            let topped = try await play.topUp(pass.token)
            try await Self.step(harness, user: "kit", token: topped.token, "topped up")
            #expect(topped.expiryTime.timeIntervalSince(pass.expiryTime) > 27 * Self.day, "a month more from the first month's end")
            #expect(await play.subscription(topped.token)?.acknowledged == true, "the top-up's token is acknowledged too")
            var state = try await harness.server.subscription(pass.firstOrderId)
            #expect(state["latestTransactionId"] as? String == topped.firstOrderId, "one subscription across the top-up: \(state)")

            // Past the first month's end the top-up carries access; at the second's, it ends.
            await play.advance(by: 15 * Self.day)
            try await Self.step(harness, user: "kit", token: topped.token, "in the topped-up month")
            #expect(try await harness.holdings("kit").entitlements == ["membership"])
            await play.advance(by: 30 * Self.day)
            try await Self.step(harness, user: "kit", token: topped.token, "the pass ran out")
            #expect(await play.subscription(topped.token)?.state == .expired)
            #expect(try await harness.holdings("kit").entitlements.isEmpty)
            state = try await harness.server.subscription(pass.firstOrderId)
            #expect(state["state"] as? String == "expired", "\(state)")
            let revenue = try await harness.server.call(.GET, "/v1/admin/users/kit/revenue", headers: ServerHarness.adminHeaders)
            let prices = ((revenue["transactions"] as? [[String: Any]]) ?? []).compactMap { $0["customerPrice"] as? Int }
            #expect(prices == [5_990, 5_990], "each charge priced from its order: \(revenue.text.prefix(400))")
        }
    }

    @Test(
        "promo codes: a free one-time purchase and a subscription's free first period are offer codes, then paid periods",
        arguments: TestDatabase.available
    )
    func promoCodes(database: TestDatabase) async throws {
        try await PlayHarness.run(database) { harness in
            let play = harness.play
            let account = await play.createAccount()
            let (_, unlockOrder) = try await harness.order("lifetime_pro", user: "lou")
            let unlock = try await play.buy(
                productId: "lifetime_pro",
                account: account.id,
                obfuscatedAccountId: unlockOrder,
                promoCode: "LAUNCH-FREE"
            )
            #expect(try await harness.submit("lifetime_pro", token: unlock.token, user: "lou").outcome == "delivered")
            let (_, subOrder) = try await harness.order("vip_monthly", user: "lou")
            let sub = try await play.subscribe(productId: "vip_monthly", account: account.id, obfuscatedAccountId: subOrder, promoCode: "VIPMONTH")
            try await Self.step(harness, user: "lou", token: sub.token, "a free month from a promo code")
            #expect(try await harness.holdings("lou").entitlements == ["membership", "chapter.2"])
            let state = try await harness.server.subscription(sub.firstOrderId)
            #expect(state["offerType"] as? Int == 3 && state["offerId"] as? String == "VIPMONTH", "an offer code, in Apple's words: \(state)")

            await play.advance(by: 31 * Self.day)
            try await Self.step(harness, user: "lou", token: sub.token, "the first paid month")
            #expect(
                await play.allEarnings().filter { $0.type == .charge }.map(\.orderId) == ["\(sub.firstOrderId)..0"],
                "only the renewal was charged"
            )
            let revenue = try await harness.server.call(.GET, "/v1/admin/users/lou/revenue", headers: ServerHarness.adminHeaders)
            let sales = (revenue["transactions"] as? [[String: Any]]) ?? []
            let prices = Dictionary(sales.compactMap { sale in (sale["transactionId"] as? String).map { ($0, sale["customerPrice"] as? Int ?? -1) } })
            { a, _ in a }
            #expect(
                prices[unlock.orderId] == 0 && prices[sub.firstOrderId] == 0 && prices["\(sub.firstOrderId)..0"] == 4_990,
                "\(revenue.text.prefix(600))"
            )
        }
    }

    @Test("one user holds an App Store and a Google Play subscription to the same entitlement", arguments: TestDatabase.available)
    func bothStoresOneEntitlement(database: TestDatabase) async throws {
        try await PlayHarness.run(database) { harness in
            let server = harness.server
            let (appleAccount, appleToken) = try await server.newCustomer("kim", product: LifecycleTests.monthly)
            let apple = try await server.store.purchase(
                productId: LifecycleTests.monthly,
                account: appleAccount,
                options: PurchaseOptions(appAccountToken: appleToken)
            )
            #expect(try await server.submit(apple.signedTransaction, headers: ServerHarness.userHeaders("kim")).status == 200)
            let (_, obfuscated) = try await harness.order("vip_yearly", user: "kim")
            let play = harness.play
            let account = await play.createAccount()
            let yearly = try await play.subscribe(productId: "vip_yearly", account: account.id, obfuscatedAccountId: obfuscated)
            try await harness.pushAndApply()

            var me = try await server.me("kim", at: Date())
            var membership = try #require(me.entitlements.first { $0.entitlement == "membership" })
            #expect(membership.active)
            #expect(Set(membership.sources.map(\.productId)) == [LifecycleTests.monthly, "vip_yearly"], "one entitlement, two stores")
            #expect(me.subscriptions.contains { $0.originalTransactionId == yearly.firstOrderId })

            // Google revokes the Play subscription: the App Store one still carries the entitlement.
            try await play.revokeSubscription(packageName: PlayHarness.packageName, token: yearly.token)
            try await harness.pushAndApply()
            me = try await server.me("kim", at: Date())
            membership = try #require(me.entitlements.first { $0.entitlement == "membership" })
            #expect(membership.active, "the App Store subscription still covers now")
            let playState = try await server.subscription(yearly.firstOrderId)
            #expect(["revoked", "expired"].contains(playState["state"] as? String ?? ""), "\(playState)")
        }
    }
}
