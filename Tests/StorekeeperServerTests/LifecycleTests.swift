import AppStoreSimulator
import AppStoreWire
import AsyncHTTPClient
import Foundation
import NIOHTTP1
import SQLKit
import StorekeeperAPI
import StorekeeperCore
import StorekeeperServer
import StorekeeperStorage
import Testing

/// Subscriptions followed through Apple's notifications, against the simulator's ground truth at every step.
@Suite("Subscription lifecycle end to end")
struct LifecycleTests {
    static let monthly = PurchaseFlowTests.monthly
    static let yearly = PurchaseFlowTests.yearly
    static let vipA = "com.example.storekeeper.vipA"
    static let vipB = "com.example.storekeeper.vipB"
    static let day: TimeInterval = 86_400

    @Test("a year of a monthly subscription with a free trial and two billing failures", arguments: TestDatabase.available)
    func yearWithTrialAndBillingFailures(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (account, token) = try await server.newCustomer("ann", product: Self.monthly)
            let bought = try await store.purchase(
                productId: Self.monthly,
                account: account,
                options: PurchaseOptions(appAccountToken: token, introductoryOfferEligible: true)
            )
            #expect(bought.transaction.offerType == .introductory)
            let original = try #require(bought.transaction.originalTransactionId)
            try await server.deliverAndApply()
            try await server.expectMatchesTruth(user: "ann", token: token, "trial started")
            var sub = try await server.subscription(original)
            #expect(sub["state"] as? String == "active")
            #expect(sub["offerType"] as? Int == 1)
            #expect(sub["userId"] as? String == "ann")

            // The trial ends and the first paid month renews, then two more.
            try await store.advance(by: 8 * Self.day)
            try await server.deliverAndApply()
            try await server.expectMatchesTruth(user: "ann", token: token, "first paid month")
            for month in 0..<2 {
                try await store.advance(by: 31 * Self.day)
                try await server.deliverAndApply()
                try await server.expectMatchesTruth(user: "ann", token: token, "renewal \(month)")
            }

            // Billing failure one: grace period, recovered inside it.
            try await store.setBillingFails(true, account: account)
            try await store.advance(by: 31 * Self.day)
            try await server.deliverAndApply()
            sub = try await server.subscription(original)
            #expect(sub["state"] as? String == "grace_period")
            #expect(sub["gracePeriodExpiresAt"] != nil)
            try await server.expectMatchesTruth(user: "ann", token: token, "in grace")
            try await store.advance(by: 5 * Self.day)
            try await store.setBillingFails(false, account: account)
            try await store.advance(by: 1.5 * Self.day)
            try await server.deliverAndApply()
            sub = try await server.subscription(original)
            #expect(sub["state"] as? String == "active")
            #expect(sub["lastEvent"] as? String == "DID_RENEW/BILLING_RECOVERY")
            try await server.expectMatchesTruth(user: "ann", token: token, "recovered in grace")

            // Billing failure two: grace runs out, billing retry, Apple gives up.
            try await store.setBillingFails(true, account: account)
            try await store.advance(by: 31 * Self.day)
            try await server.deliverAndApply()
            try await store.advance(by: 17 * Self.day)
            try await server.deliverAndApply()
            sub = try await server.subscription(original)
            #expect(sub["state"] as? String == "billing_retry")
            try await server.expectMatchesTruth(user: "ann", token: token, "billing retry")
            try await store.advance(by: 60 * Self.day)
            try await server.deliverAndApply()
            sub = try await server.subscription(original)
            #expect(sub["state"] as? String == "expired")
            #expect(sub["expirationReason"] as? String == "BILLING_RETRY")
            #expect(sub["state"] as? String == ServerHarness.storekeeperState(try await store.subscriptionState(original)))
            try await server.expectMatchesTruth(user: "ann", token: token, "expired after billing retry")

            // Back again: a resubscribe, and the rest of the year.
            try await store.setBillingFails(false, account: account)
            _ = try await store.purchase(productId: Self.monthly, account: account, appAccountToken: token)
            try await server.deliverAndApply()
            try await server.expectMatchesTruth(user: "ann", token: token, "resubscribed")
            for month in 0..<4 {
                try await store.advance(by: 31 * Self.day)
                try await server.deliverAndApply()
                try await server.expectMatchesTruth(user: "ann", token: token, "late renewal \(month)")
            }
            sub = try await server.subscription(original)
            #expect(sub["state"] as? String == ServerHarness.storekeeperState(try await store.subscriptionState(original)))
            // Every notification was applied once; none is left pending or dead.
            let summary = try await server.call(.GET, "/v1/admin/notifications/summary", headers: ServerHarness.adminHeaders)
            let counts = summary["counts"] as? [String: Int] ?? [:]
            #expect(counts["pending"] == nil && counts["dead"] == nil, "\(counts)")
            #expect((counts["processed"] ?? 0) == (await store.sentNotifications().count))
            // Each transition is audited.
            let actions = try await server.audit("ann").map(\.action)
            for action in ["subscription.grace_period", "subscription.billing_retry", "subscription.expired", "entitlement.extended"] {
                #expect(actions.contains(action), "\(action) missing from \(Set(actions))")
            }
        }
    }

    @Test("upgrade at once, downgrade at renewal, a price increase, a refund and its reversal", arguments: TestDatabase.available)
    func planChangesAndRefunds(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (account, token) = try await server.newCustomer("bob", product: Self.monthly)
            let first = try await store.purchase(productId: Self.monthly, account: account, appAccountToken: token)
            let original = try #require(first.transaction.originalTransactionId)
            try await server.deliverAndApply()
            try await store.advance(by: 10 * Self.day)

            // Upgrade (monthly → yearly, level 2 → 1): a new transaction now; the month ends where the year starts.
            let upgraded = try await store.purchase(productId: Self.yearly, account: account, appAccountToken: token)
            try await server.deliverAndApply()
            var sub = try await server.subscription(original)
            #expect(sub["productId"] as? String == Self.yearly)
            let me = try await server.me("bob", at: await server.simulatedNow)
            let sources = try #require(server.entitlement("membership", of: me)?.sources)
            // The trial renewed into a paid month before the upgrade; that month is the one replaced.
            let monthSource = try #require(
                sources.filter { $0.productId == Self.monthly }.max { $0.startsAt < $1.startsAt }
            )
            #expect(sources.contains { $0.transactionId == first.transaction.transactionId })
            let yearSource = try #require(sources.first { $0.transactionId == upgraded.transaction.transactionId })
            #expect(monthSource.endsAt == yearSource.startsAt)
            try await server.expectMatchesTruth(user: "bob", token: token, "upgraded")

            // Downgrade back to monthly: only the next renewal changes.
            _ = try await store.purchase(productId: Self.monthly, account: account, appAccountToken: token)
            try await server.deliverAndApply()
            sub = try await server.subscription(original)
            #expect(sub["productId"] as? String == Self.yearly)
            #expect(sub["autoRenewProductId"] as? String == Self.monthly)
            try await store.advance(by: 366 * Self.day)
            try await server.deliverAndApply()
            sub = try await server.subscription(original)
            #expect(sub["productId"] as? String == Self.monthly)
            try await server.expectMatchesTruth(user: "bob", token: token, "downgraded at renewal")

            // A price increase needing consent, then consent.
            try await store.raisePrice(productId: Self.monthly, to: 12_990, requiresConsent: true)
            try await server.deliverAndApply()
            #expect(try await server.subscription(original)["priceIncrease"] as? String == "PENDING")
            try await store.consentToPriceIncrease(originalTransactionId: original)
            try await server.deliverAndApply()
            #expect(try await server.subscription(original)["priceIncrease"] as? String == "ACCEPTED")

            // A refund of the current period, then Apple reverses it.
            let latest = try #require(await store.transactions(account: account).last?.transactionId)
            try await store.advance(by: 3 * Self.day)
            try await store.requestRefund(transactionId: latest)
            try await server.deliverAndApply()
            try await store.decideRefund(transactionId: latest, approve: true)
            try await server.deliverAndApply()
            sub = try await server.subscription(original)
            #expect(sub["state"] as? String == "refunded")
            try await server.expectMatchesTruth(user: "bob", token: token, "refunded")
            #expect(try await server.activeEntitlements("bob", at: await server.simulatedNow).isEmpty)
            // Before the refund date the period stood: support can see what the customer had.
            #expect(try await server.activeEntitlements("bob", at: await server.simulatedNow - Self.day).contains("membership"))
            try await store.reverseRefund(transactionId: latest)
            try await server.deliverAndApply()
            sub = try await server.subscription(original)
            #expect(sub["state"] as? String == "active")
            try await server.expectMatchesTruth(user: "bob", token: token, "refund reversed")
            let actions = try await server.audit("bob").map(\.action)
            for action in ["entitlement.replaced", "entitlement.revoked", "entitlement.reinstated", "transaction.refunded", "refund.requested"] {
                #expect(actions.contains(action), "\(action) missing")
            }
        }
    }

    @Test(
        "vipA → vipB crossgrade yields one paid period whatever order uploads and notifications arrive in",
        arguments: [false, true]
    )
    func crossgradeExploit(notificationsFirst: Bool) async throws {
        try await ServerHarness.run(.sqlite) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (account, token) = try await server.newCustomer("cat", product: Self.vipA)
            let a = try await store.purchase(productId: Self.vipA, account: account, appAccountToken: token)
            try await store.advance(by: 3 * Self.day)
            let b = try await store.purchase(productId: Self.vipB, account: account, appAccountToken: token)
            #expect(b.transaction.originalTransactionId == a.transaction.originalTransactionId)
            let headers = ServerHarness.userHeaders("cat")
            let delivery = NotificationDeliveryService(
                store: store,
                url: server.serverURL + "/apple/notifications/v2",
                httpClient: .shared
            )
            if notificationsFirst {
                // Apple's notifications (newest first), then the client's uploads (newest first).
                try await store.setDeliveryFaults(DeliveryFaults(outOfOrder: true))
                await delivery.deliverDue()
                try await server.runJob("process-notifications")
                #expect(try await server.submit(b.signedTransaction, headers: headers).status == 200)
                #expect(try await server.submit(a.signedTransaction, headers: headers).status == 200)
            } else {
                #expect(try await server.submit(a.signedTransaction, headers: headers).status == 200)
                #expect(try await server.submit(b.signedTransaction, headers: headers).status == 200)
                await delivery.deliverDue()
                try await server.runJob("process-notifications")
            }
            let now = await server.simulatedNow
            let me = try await server.me("cat", at: now)
            let vip = try #require(server.entitlement("vip", of: me))
            let sources = vip.sources
            #expect(sources.count == 2)
            let aSource = try #require(sources.first { $0.productId == Self.vipA })
            let bSource = try #require(sources.first { $0.productId == Self.vipB })
            // vipA ends where vipB starts: paid time is the days of vipA used plus one month of vipB, not two months.
            let aEnd = try #require(aSource.endsAt)
            let bStart = bSource.startsAt
            let bEnd = try #require(bSource.endsAt)
            #expect(abs(aEnd.timeIntervalSince(bStart)) < 0.002)
            #expect(abs(try #require(vip.expiresAt).timeIntervalSince(bEnd)) < 0.002)
            let aStart = aSource.startsAt
            let covered = aEnd.timeIntervalSince(aStart) + bEnd.timeIntervalSince(bStart)
            #expect(covered < 35 * Self.day, "covered \(covered / Self.day) days for one month paid")
            // Well after vipB's month, nothing is left.
            #expect(try await server.activeEntitlements("cat", at: bEnd + 2 * Self.day).isEmpty)
            try await server.expectMatchesTruth(user: "cat", token: token, "after crossgrade")
        }
    }

    @Test("coins bought, spent and refunded: a debt by default, forgiven under the floor policy", arguments: [false, true])
    func coinRefunds(floor: Bool) async throws {
        try await ServerHarness.run(.sqlite, configure: { if floor { $0.lifecycle.coinClawback = .floor } }) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (account, token) = try await server.newCustomer("dan", product: PurchaseFlowTests.coins)
            let bought = try await store.purchase(productId: PurchaseFlowTests.coins, account: account, appAccountToken: token)
            try await server.deliverAndApply()
            #expect(try await server.coins("dan") == 60)
            let spend = try await server.call(
                .POST,
                "/v1/wallet/spend",
                json: ["amount": 45, "idempotencyKey": "sword"],
                headers: ServerHarness.userHeaders("dan")
            )
            #expect(spend.status == 200, "\(spend.text)")
            try await store.decideRefund(transactionId: bought.transaction.transactionId!, approve: true)
            try await server.deliverAndApply()
            let audit = try await server.audit("dan")
            if floor {
                #expect(try await server.coins("dan") == 0)
                let forgiven = try #require(audit.first { $0.action == "wallet.clawback_forgiven" })
                #expect(forgiven.amount == 45)
            } else {
                #expect(try await server.coins("dan") == -45)
                #expect(audit.contains { $0.action == "wallet.debited" && $0.amount == -60 })
            }
            // The same refund again (Apple retried with a new notification) changes nothing.
            let refund = try #require(await store.sentNotifications().last { $0.type == .refund })
            _ = try await server.call(.POST, "/apple/notifications/v2", json: ["signedPayload": refund.signedPayload])
            try await server.runJob("process-notifications")
            #expect(try await server.coins("dan") == (floor ? 0 : -45))
            // Apple reverses it: the coins taken come back.
            try await store.reverseRefund(transactionId: bought.transaction.transactionId!)
            try await server.deliverAndApply()
            #expect(try await server.coins("dan") == 15)
        }
    }

    @Test("a refund question is answered once, within 12 hours, with Storekeeper's own figures", arguments: TestDatabase.available)
    func consumptionRequestAnswered(database: TestDatabase) async throws {
        try await ServerHarness.run(
            database,
            configure: {
                $0.lifecycle.customerConsented = true
                $0.lifecycle.refundPreference = [.consumable: "GRANT_PRORATED"]
            }
        ) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (account, token) = try await server.newCustomer("eve", product: PurchaseFlowTests.coins)
            let bought = try await store.purchase(productId: PurchaseFlowTests.coins, account: account, appAccountToken: token)
            try await server.deliverAndApply()
            _ = try await server.call(
                .POST,
                "/v1/wallet/spend",
                json: ["amount": 15, "idempotencyKey": "potion"],
                headers: ServerHarness.userHeaders("eve")
            )
            let id = try #require(bought.transaction.transactionId)
            try await store.requestRefund(transactionId: id, reason: .unsatisfiedWithPurchase)
            try await server.deliverAndApply()
            let pending = try await server.call(
                .GET,
                "/v1/admin/consumption-requests?status=pending",
                headers: ServerHarness.adminHeaders
            )
            #expect((pending["requests"] as? [[String: Any]])?.count == 1)
            #expect(try await server.runJob("consumption-responder", now: await server.simulatedNow + 3_600) == 1)
            let sent = try #require(await store.consumptionInformation(transactionId: id))
            #expect(sent.customerConsented)
            #expect(sent.deliveryStatus == .delivered)
            #expect(sent.consumptionPercentage == 25_000)  // 15 of 60 coins spent
            #expect(sent.refundPreference == .grantProrated)
            // At most once: running again sends nothing.
            #expect(try await server.runJob("consumption-responder", now: await server.simulatedNow + 7_200) == 0)
            let answered = try await server.call(
                .GET,
                "/v1/admin/consumption-requests?status=answered",
                headers: ServerHarness.adminHeaders
            )
            #expect((answered["requests"] as? [[String: Any]])?.count == 1)
            #expect(try await server.audit("eve").contains { $0.action == "refund.consumption_answered" })
        }
    }

    @Test("version 2 answers every product type; where Apple refuses a type (April 2026: non-renewing, 4000047), version 1 does")
    func consumptionVersions() async throws {
        try await ServerHarness.run(.sqlite, configure: { $0.lifecycle.customerConsented = true }) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (account, token) = try await server.newCustomer("pat", product: PurchaseFlowTests.coins)
            let coins = try await store.purchase(productId: PurchaseFlowTests.coins, account: account, appAccountToken: token)
            let pass = try await store.purchase(productId: PurchaseFlowTests.pass, account: account, appAccountToken: token)
            try await server.deliverAndApply()
            for bought in [coins, pass] { try await store.requestRefund(transactionId: try #require(bought.transaction.transactionId)) }
            try await server.deliverAndApply()
            #expect(try await server.runJob("consumption-responder", now: await server.simulatedNow + 60) == 2)
            let log = await store.receivedConsumptionAnswers()
            #expect(log.map(\.endpoint) == [.v2, .v2], "no refused call left behind: \(log.map(\.endpoint))")

            // Apple's April 2026 behaviour: version 2 refuses the pass, version 1 takes it.
            await store.setConsumptionV2RefusesNonRenewing(true)
            try await store.advance(by: 32 * 86_400)
            let second = try await store.purchase(productId: PurchaseFlowTests.pass, account: account, appAccountToken: token)
            try await server.deliverAndApply()
            try await store.requestRefund(transactionId: try #require(second.transaction.transactionId))
            try await server.deliverAndApply()
            #expect(try await server.runJob("consumption-responder", now: await server.simulatedNow + 60) == 1)
            let answers = await store.receivedConsumptionAnswers()
            #expect(answers.last { $0.transactionId == second.transaction.transactionId }?.endpoint == .v1)
            #expect(answers.count == 3)
        }
    }

    @Test("a refund question past Apple's 12 hours, or without consent, is not answered and says why")
    func consumptionRequestRefused() async throws {
        try await ServerHarness.run(.sqlite) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (account, token) = try await server.newCustomer("fay", product: PurchaseFlowTests.coins)
            let bought = try await store.purchase(productId: PurchaseFlowTests.coins, account: account, appAccountToken: token)
            try await server.deliverAndApply()
            try await store.requestRefund(transactionId: bought.transaction.transactionId!)
            try await server.deliverAndApply()
            #expect(try await server.runJob("consumption-responder") == 0)
            let failed = try await server.call(.GET, "/v1/admin/consumption-requests?status=failed", headers: ServerHarness.adminHeaders)
            let item = try #require((failed["requests"] as? [[String: Any]])?.first)
            #expect((item["lastError"] as? String)?.contains("consent") == true)
            #expect(await store.consumptionInformation(transactionId: bought.transaction.transactionId!) == nil)
        }
    }

    @Test("Family Sharing revoked: the member loses the shared unlock", arguments: TestDatabase.available)
    func familyRevoke(database: TestDatabase) async throws {
        var catalog = try ServerHarness.simulatorCatalog()
        let index = try #require(catalog.products.firstIndex { $0.id == PurchaseFlowTests.chapter })
        catalog.products[index].familyShareable = true
        try await ServerHarness.run(database, catalog: catalog) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (parent, token) = try await server.newCustomer("gus", product: PurchaseFlowTests.chapter)
            let child = try await store.createAccount().id
            _ = try await store.createFamily([parent, child])
            _ = try await store.purchase(productId: PurchaseFlowTests.chapter, account: parent, appAccountToken: token)
            // The child's copy has no token: its notification is parked until the child's app submits it.
            try await server.deliverAndApply()
            let copy = try #require(await store.transactions(account: child).first)
            let signed = try await store.signedTransaction(copy.transactionId!)
            #expect(try await server.submit(signed, headers: ServerHarness.userHeaders("hal")).status == 200)
            #expect(try await server.activeEntitlements("hal", at: await server.simulatedNow).contains("chapter.2"))
            try await store.advance(by: Self.day)
            try await store.leaveFamily(account: child)
            try await server.deliverAndApply()
            #expect(!(try await server.activeEntitlements("hal", at: await server.simulatedNow).contains("chapter.2")))
            #expect(try await server.activeEntitlements("gus", at: await server.simulatedNow).contains("chapter.2"))
            #expect(try await server.audit("hal").contains { $0.action == "transaction.revoked" })
        }
    }

    @Test("dropped notifications come back through catch-up; an unannounced renewal through the sweep", arguments: TestDatabase.available)
    func catchUpAndSweep(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (account, token) = try await server.newCustomer("ivy", product: Self.monthly)
            let bought = try await store.purchase(productId: Self.monthly, account: account, appAccountToken: token)
            let original = try #require(bought.transaction.originalTransactionId)
            try await server.deliverAndApply()
            // Apple's next sends are lost: a renewal and a refund the server never hears of.
            try await store.setDeliveryFaults(DeliveryFaults(dropNext: 10))
            try await store.advance(by: 31 * Self.day)
            let renewal = try #require(await store.transactions(account: account).last?.transactionId)
            try await store.decideRefund(transactionId: renewal, approve: true)
            try await server.deliverAndApply()
            // The server still believes the first period is all there was.
            #expect(try await server.subscription(original)["state"] as? String == "active")
            // The job runs a minute later (Apple's history end date is exclusive).
            let added = try await server.runJob("catch-up", now: await server.simulatedNow + 60)
            #expect(added >= 2)
            try await server.runJob("process-notifications")
            try await server.expectMatchesTruth(user: "ivy", token: token, "after catch-up")
            #expect(try await server.subscription(original)["state"] as? String == "refunded")
            // A second catch-up finds nothing new.
            #expect(try await server.runJob("catch-up", now: await server.simulatedNow + 120) == 0)

            // The renewal sweep: a renewal whose notifications never arrive at all.
            try await store.setDeliveryFaults(DeliveryFaults())
            let (other, otherToken) = try await server.newCustomer("ivo", product: Self.monthly)
            let second = try await store.purchase(productId: Self.monthly, account: other, appAccountToken: otherToken)
            try await server.deliverAndApply()
            try await store.setDeliveryFaults(DeliveryFaults(dropNext: 1_000))
            try await store.advance(by: 31 * Self.day)
            try await server.deliverAndApply()
            #expect(try await server.activeEntitlements("ivo", at: await server.simulatedNow).isEmpty)
            #expect(try await server.runJob("renewal-sweep") >= 1)
            try await server.expectMatchesTruth(user: "ivo", token: otherToken, "after the sweep")
            #expect(try await server.activeEntitlements("ivo", at: await server.simulatedNow).contains("membership"))
            let sub = try await server.subscription(try #require(second.transaction.originalTransactionId))
            #expect(sub["state"] as? String == "active")
            #expect(sub["checkedAt"] != nil)
        }
    }

    @Test("without a Server API key, the sweep asks verifyReceipt with the stored receipt", arguments: TestDatabase.available)
    func legacySweep(database: TestDatabase) async throws {
        // An app with only legacy receipts: no In-App Purchase key, so no App Store Server API.
        try await ServerHarness.run(
            database,
            configure: { configuration in
                configuration.apps[0].apiKeyId = nil
                configuration.apps[0].apiIssuerId = nil
                configuration.apps[0].apiKeyPEM = nil
            }
        ) { server in
            let store = server.store
            let (account, token) = try await server.newCustomer("lea", product: Self.monthly)
            let bought = try await store.purchase(productId: Self.monthly, account: account, appAccountToken: token)
            let original = try #require(bought.transaction.originalTransactionId)
            let receipt = try await server.receipt(account: account)
            let reply = try await server.call(.POST, "/v1/purchases", json: ["receipt": receipt], headers: ServerHarness.userHeaders("lea"))
            #expect(reply.outcome == "delivered", "\(reply.text)")
            // The receipt alone makes the subscription one Storekeeper follows.
            #expect(try await server.subscription(original)["lastEvent"] as? String == "verifyReceipt")

            // A month on, Apple renewed and nobody told the server (no notifications, no new receipt).
            try await store.advance(by: 31 * Self.day)
            #expect(await store.transactions(account: account).count == 2)
            #expect(try await server.activeEntitlements("lea", at: await server.simulatedNow).isEmpty)
            #expect(try await server.runJob("renewal-sweep") == 1)
            try await server.expectMatchesTruth(user: "lea", token: token, "after the verifyReceipt sweep")
            #expect(try await server.activeEntitlements("lea", at: await server.simulatedNow).contains("membership"))
            let sub = try await server.subscription(original)
            #expect(sub["state"] as? String == "active")
            #expect(sub["checkedAt"] != nil)
            // Checked just now: the next run leaves it alone.
            #expect(try await server.runJob("renewal-sweep") == 0)

            // Another month, and the renewal is refunded before anyone looks: the sweep finds both.
            try await store.advance(by: 31 * Self.day)
            let third = try #require(await store.transactions(account: account).last?.transactionId)
            try await store.decideRefund(transactionId: third, approve: true)
            #expect(try await server.runJob("renewal-sweep", now: await server.simulatedNow + 7_200) == 1)
            try await server.expectMatchesTruth(user: "lea", token: token, "after a refunded renewal")
            #expect(try await server.subscription(original)["state"] as? String == "refunded")
        }
    }

    @Test(
        "a notification that keeps failing becomes a dead letter with its error, told to the backend (also when nobody holds its transaction), and can be retried",
        arguments: TestDatabase.available
    )
    func deadLetters(database: TestDatabase) async throws {
        let receiver = WebhookReceiver()
        let port = try WebhookReceiver.freePort()
        try await receiver.serve(port: port) {
            try await deadLetters(database: database, receiver: receiver, port: port)
        }
    }

    private func deadLetters(database: TestDatabase, receiver: WebhookReceiver, port: Int) async throws {
        try await ServerHarness.run(
            database,
            configure: {
                $0.lifecycle.maxAttempts = 2
                $0.lifecycle.processNotifications = true
                $0.webhooks = [WebhookTests.endpoint(port: port, types: ["notification.*"])]
            }
        ) {
            server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (account, token) = try await server.newCustomer("jay", product: Self.monthly)
            _ = try await store.purchase(productId: Self.monthly, account: account, appAccountToken: token)
            // Bought outside the app (no token) and never submitted: nobody holds it.
            let stranger = try await store.createAccount().id
            let stray = try await store.purchase(productId: Self.monthly, account: stranger)
            let strayOriginal = try #require(stray.transaction.originalTransactionId)
            try await server.withSideConnection { db in
                try await db.withSession { try await $0.raw("ALTER TABLE subscriptions RENAME TO subscriptions_broken").run() }
            }
            let delivery = NotificationDeliveryService(store: store, url: server.serverURL + "/apple/notifications/v2", httpClient: .shared)
            await delivery.deliverDue()
            // Stored and answered 200 even though it cannot be applied yet.
            for hours in [1.0, 2.0, 3.0] {
                try await server.runJob("process-notifications", now: Date().addingTimeInterval(hours * 3_600))
            }
            let dead = try await server.call(.GET, "/v1/admin/notifications?status=dead", headers: ServerHarness.adminHeaders)
            let letter = try #require((dead["notifications"] as? [[String: Any]])?.first)
            #expect(letter["attempts"] as? Int == 2)
            #expect((letter["lastError"] as? String)?.isEmpty == false)
            // The purchase itself was delivered: only the failing state update waits.
            #expect(try await server.audit("jay").contains { $0.action == "entitlement.granted" })
            // The customer's backend hears of the dead letter through the outbox.
            let events = try await server.api(ServerHarness.adminHeaders).adminListEvents(query: .init(userId: "jay")).ok.body.json.events
            let deadLettered = events.first { $0._type == "notification.dead_lettered" }
            let letters = try #require(dead["notifications"] as? [[String: Any]])
            #expect(letters.count == 2, "jay's notification and the stranger's")
            let jays = try #require(letters.first { $0["originalTransactionId"] as? String != strayOriginal })
            let strays = try #require(letters.first { $0["originalTransactionId"] as? String == strayOriginal })
            #expect(deadLettered?.subject == jays["id"] as? String, "\(events.map(\._type))")
            #expect(deadLettered?.details.additionalProperties["error"]?.isEmpty == false)
            // The stranger's dead letter is news too: an event about no known user (empty userId in the pull API).
            let all = try await server.api(ServerHarness.adminHeaders).adminListEvents(query: .init()).ok.body.json.events
            let unowned = try #require(all.first { $0._type == "notification.dead_lettered" && $0.subject == strays["id"] as? String })
            #expect(unowned.userId == "")
            #expect(unowned.sequence == 1)
            #expect(unowned.details.additionalProperties["originalTransactionId"] == strayOriginal)
            try await server.withSideConnection { db in
                try await db.withSession { try await $0.raw("ALTER TABLE subscriptions_broken RENAME TO subscriptions").run() }
            }
            // Pushed to the backend (jay's state can be read again now): jay's with his state, the stranger's without user or state.
            try await WebhookTests.waitFor([deadLettered?.position ?? -1, unowned.position], at: receiver)
            let pushed = receiver.received.map(\.json)
            let pushedJays = try #require(pushed.first { ($0["id"] as? NSNumber)?.int64Value == deadLettered?.position })
            #expect(pushedJays["user"] as? String == "jay")
            #expect(pushedJays["state"] is [String: Any])
            let pushedStray = try #require(pushed.first { ($0["id"] as? NSNumber)?.int64Value == unowned.position })
            #expect(pushedStray["type"] as? String == "notification.dead_lettered")
            #expect(pushedStray["user"] == nil && pushedStray["state"] == nil, "\(pushedStray)")
            #expect((pushedStray["change"] as? [String: Any])?["originalTransactionId"] as? String == strayOriginal)
            let id = try #require(jays["id"] as? String)
            let retried = try await server.call(.POST, "/v1/admin/notifications/\(id)/retry", headers: ServerHarness.adminHeaders)
            #expect(retried.status == 200)
            try await server.runJob("process-notifications", now: Date())
            let processed = try await server.call(.GET, "/v1/admin/notifications?status=processed", headers: ServerHarness.adminHeaders)
            #expect((processed["notifications"] as? [[String: Any]])?.contains { $0["id"] as? String == id } == true)
            try await server.expectMatchesTruth(user: "jay", token: token, "after the retry")
        }
    }

    @Test("V1 notifications drive the same state machine, including CANCEL", arguments: TestDatabase.available)
    func v1Notifications(database: TestDatabase) async throws {
        let secret = "lifecycle-v1-shared-secret"
        try await ServerHarness.run(database, configure: { $0.apps[0].sharedSecret = secret }) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let composer = V1NotificationComposer(identity: SharedIdentities.receipts, sharedSecret: secret)
            let (account, token) = try await server.newCustomer("kim", product: Self.monthly)
            let bought = try await store.purchase(productId: Self.monthly, account: account, appAccountToken: token)
            let original = try #require(bought.transaction.originalTransactionId)
            try await server.deliverAndApply(format: .v1(composer), path: "/apple/notifications/v1")
            try await server.expectMatchesTruth(user: "kim", token: token, "V1 INITIAL_BUY")
            try await store.advance(by: 31 * Self.day)
            try await server.deliverAndApply(format: .v1(composer), path: "/apple/notifications/v1")
            try await server.expectMatchesTruth(user: "kim", token: token, "V1 DID_RENEW")
            #expect(try await server.subscription(original)["state"] as? String == "active")
            // AppleCare refunds the subscription: V1 CANCEL with a cancellation date.
            let latest = try #require(await store.transactions(account: account).last?.transactionId)
            try await store.advance(by: 2 * Self.day)
            try await store.decideRefund(transactionId: latest, approve: true)
            try await server.deliverAndApply(format: .v1(composer), path: "/apple/notifications/v1")
            try await server.expectMatchesTruth(user: "kim", token: token, "V1 CANCEL")
            #expect(try await server.subscription(original)["state"] as? String == "refunded")
            #expect(try await server.audit("kim").contains { $0.action == "entitlement.revoked" })
        }
    }

    @Test("a notification for a transaction never seen creates its record, or parks it without a user")
    func unseenTransactions() async throws {
        try await ServerHarness.run(.sqlite) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (account, token) = try await server.newCustomer("lee", product: PurchaseFlowTests.chapter)
            _ = try await store.purchase(productId: PurchaseFlowTests.chapter, account: account, appAccountToken: token)
            let stranger = try await store.createAccount().id
            let anonymous = try await store.purchase(productId: PurchaseFlowTests.coins, account: stranger)
            try await server.deliverAndApply()
            // Attributed by the order's appAccountToken without the client ever submitting.
            #expect(try await server.activeEntitlements("lee", at: await server.simulatedNow).contains("chapter.2"))
            let pending = try await server.call(.GET, "/v1/admin/pending", headers: ServerHarness.adminHeaders)
            #expect(pending.text.contains(anonymous.transaction.transactionId!), "\(pending.text)")
        }
    }
}

/// `RENEWAL_EXTENSION` / `FAILURE`: a subscriber Apple left out of an extension for all subscribers is put on their
/// audit trail for support; the ones it extended are not.
@Suite struct RenewalExtensionFailureTests {
    @Test("a subscriber left out of a mass extension is on support's audit trail", arguments: TestDatabase.available)
    func leftOutOfAMassExtension(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            // Ann is in her free trial, which Apple does not extend; Bob has paid.
            let (annAccount, annToken) = try await server.newCustomer("ann", product: LifecycleTests.monthly)
            let ann = try await store.purchase(
                productId: LifecycleTests.monthly,
                account: annAccount,
                options: PurchaseOptions(appAccountToken: annToken, introductoryOfferEligible: true)
            )
            #expect(ann.transaction.offerType == .introductory)
            let (bobAccount, bobToken) = try await server.newCustomer("bob", product: LifecycleTests.monthly)
            let bob = try await store.purchase(
                productId: LifecycleTests.monthly,
                account: bobAccount,
                options: PurchaseOptions(appAccountToken: bobToken, introductoryOfferEligible: false)
            )
            try await server.deliverAndApply()

            let status = try await store.extendRenewalDateForAll(productId: LifecycleTests.monthly, days: 5, requestIdentifier: "outage-1")
            #expect(status.succeededCount == 1)
            #expect(status.failedCount == 1)
            try await server.deliverAndApply()

            let annFailure = try await server.audit("ann").filter { $0.action == "subscription.extension_failed" }
            #expect(annFailure.count == 1)
            #expect(annFailure.first?.subject == ann.transaction.transactionId)
            #expect(annFailure.first?.detail?.contains("could not extend") == true)
            #expect(try await server.audit("bob").contains { $0.action == "subscription.extension_failed" } == false)
            #expect(bob.transaction.offerType == nil)

            // The same notification again (Apple retries until it gets a 200) adds nothing.
            let failure = try #require(await store.sentNotifications().last { $0.type == .renewalExtension && $0.subtype == .failure })
            let again = try await server.call(.POST, "/apple/notifications/v2", json: ["signedPayload": failure.signedPayload])
            #expect(again.status == 200, "\(again.text)")
            try await server.deliverAndApply()
            #expect(try await server.audit("ann").filter { $0.action == "subscription.extension_failed" }.count == 1)
        }
    }
}
