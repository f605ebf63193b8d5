import AsyncHTTPClient
import Foundation
import GooglePlaySimulator
import GooglePlayWire
import Hummingbird
import HummingbirdTesting
import Testing

/// Subscriptions in the Play simulator, read through GooglePlayWire's client over a socket: a free trial and its
/// renewals on the billing day, a declined renewal through the grace period (recovered, keeping the day) and into
/// account hold (recovered, starting a new period), cancel and restore, expiry, Google's three-day acknowledgement
/// rule, and the developer's revoke and defer — each step checked against the notification Google would send.
@Suite struct PlaySubscriptionTests {
    static let package = PlayCatalog.sample.packageName
    static let day: TimeInterval = 86_400

    func withSimulator(_ body: @escaping @Sendable (SimulatedPlayStore, PlayDeveloperAPIClient) async throws -> Void) async throws {
        let store = try SimulatedPlayStore(now: Date(timeIntervalSince1970: 1_790_812_800))  // 2026-10-01T00:00:00Z
        let app = PlaySimulatorServer.buildApplication(store: store, port: 0)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let key = try await store.issueServiceAccount(
                email: "storekeeper@sim.iam.gserviceaccount.com",
                tokenURI: "http://127.0.0.1:\(port)/token"
            )
            let transport = AsyncHTTPPlayTransport(client: .shared)
            try await body(
                store,
                PlayDeveloperAPIClient(
                    baseURL: "http://127.0.0.1:\(port)",
                    tokens: AccessTokenProvider(key: key, transport: transport),
                    transport: transport
                )
            )
        }
    }

    static func date(_ text: String) -> Date { PlayJSON.parseTimestamp(text)! }

    /// The subscription notifications published for `token` since `from`.
    static func notifications(_ store: SimulatedPlayStore, _ token: String, from: Int = 0) async -> [SubscriptionNotificationType] {
        await store.published.compactMap(\.subscriptionNotification).filter { $0.purchaseToken == token }.dropFirst(from).compactMap(
            \.notificationType
        )
    }

    @Test func aTrialRenewalsGraceHoldCancelAndExpiry() async throws {
        try await withSimulator { store, api in
            let account = await store.createAccount()
            let sub = try await store.subscribe(productId: "vip_monthly", account: account.id, obfuscatedAccountId: "order-9", trial: true)
            var read = try await api.getSubscription(packageName: Self.package, token: sub.token)
            #expect(read.subscriptionState == .active)
            #expect(read.acknowledgementState == .pending)
            #expect(read.externalAccountIdentifiers?.obfuscatedExternalAccountId == "order-9")
            #expect(read.lineItems?.first?.offerPhase?.freeTrial != nil)
            #expect(read.lineItems?.first?.offerDetails?.offerId == "trial-7d")
            #expect(read.expiryTime == Self.date("2026-10-08T00:00:00Z"))
            try await api.acknowledgeSubscription(packageName: Self.package, subscriptionId: "vip_monthly", token: sub.token)
            #expect(try await api.getSubscription(packageName: Self.package, token: sub.token).acknowledgementState == .acknowledged)

            // The trial ends: the first paid month, then two more on the same day of the month.
            await store.advance(by: 7 * Self.day)
            read = try await api.getSubscription(packageName: Self.package, token: sub.token)
            #expect(read.lineItems?.first?.offerPhase?.basePrice != nil)
            #expect(read.expiryTime == Self.date("2026-11-08T00:00:00Z"))
            #expect(read.lineItems?.first?.latestSuccessfulOrderId == sub.firstOrderId + "..0")
            await store.advance(by: 62 * Self.day)
            read = try await api.getSubscription(packageName: Self.package, token: sub.token)
            #expect(read.expiryTime == Self.date("2027-01-08T00:00:00Z"))
            #expect(read.lineItems?.first?.latestSuccessfulOrderId == sub.firstOrderId + "..2")
            #expect(await Self.notifications(store, sub.token) == [.purchased, .renewed, .renewed, .renewed])

            // Declined on 8 Jan: three days' grace (still entitled), fixed on the second retry: the billing day stays.
            await store.setBillingFails(true, account: account.id)
            await store.advance(by: 31 * Self.day)
            read = try await api.getSubscription(packageName: Self.package, token: sub.token)
            #expect(read.subscriptionState == .inGracePeriod)
            #expect(read.subscriptionState?.grantsAccess == true)
            #expect(read.inGracePeriodStateContext?.renewalDeclined?.pendingOrderId == sub.firstOrderId + "..3")
            #expect(read.expiryTime == Self.date("2027-01-11T00:00:00Z"))
            await store.setBillingFails(false, account: account.id)
            await store.advance(by: 1 * Self.day)
            read = try await api.getSubscription(packageName: Self.package, token: sub.token)
            #expect(read.subscriptionState == .active)
            #expect(read.expiryTime == Self.date("2027-02-08T00:00:00Z"), "recovered in grace: the billing day is kept")
            #expect(await Self.notifications(store, sub.token, from: 4) == [.inGracePeriod, .renewed])

            // Declined again on 8 Feb: grace, then hold (no access), then fixed: a new period from the recovery.
            await store.setBillingFails(true, account: account.id)
            await store.advance(by: 29 * Self.day)  // 2027-02-08: declined
            #expect(try await api.getSubscription(packageName: Self.package, token: sub.token).subscriptionState == .inGracePeriod)
            await store.advance(by: 3 * Self.day)  // 2027-02-11: the grace period is over
            read = try await api.getSubscription(packageName: Self.package, token: sub.token)
            #expect(read.subscriptionState == .onHold)
            #expect(read.subscriptionState?.grantsAccess == false)
            await store.setBillingFails(false, account: account.id)
            await store.advance(by: 1 * Self.day)
            read = try await api.getSubscription(packageName: Self.package, token: sub.token)
            #expect(read.subscriptionState == .active)
            #expect(await Self.notifications(store, sub.token, from: 6) == [.inGracePeriod, .onHold, .recovered])
            let recoveredAt = await store.now
            #expect(read.expiryTime.map { $0 > recoveredAt.addingTimeInterval(27 * Self.day) } == true, "a month from the recovery")

            // Cancel, restore, cancel again: entitled until the expiry, then expired.
            try await store.cancelSubscription(token: sub.token)
            read = try await api.getSubscription(packageName: Self.package, token: sub.token)
            #expect(read.subscriptionState == .canceled)
            #expect(read.canceledStateContext?.userInitiatedCancellation != nil)
            #expect(read.lineItems?.first?.autoRenewingPlan?.autoRenewEnabled == false)
            try await store.restoreSubscription(token: sub.token)
            try await store.cancelSubscription(token: sub.token)
            await store.advance(by: 40 * Self.day)
            read = try await api.getSubscription(packageName: Self.package, token: sub.token)
            #expect(read.subscriptionState == .expired)
            #expect(await Self.notifications(store, sub.token, from: 9) == [.canceled, .restarted, .canceled, .expired])
        }
    }

    @Test func unacknowledgedRevokedAndDeferred() async throws {
        try await withSimulator { store, api in
            let account = await store.createAccount()
            let forgotten = try await store.subscribe(productId: "vip_yearly", account: account.id)
            await store.advance(by: 3 * Self.day + 1)
            #expect(try await api.getSubscription(packageName: Self.package, token: forgotten.token).subscriptionState == .expired)
            let voided = try await api.listVoidedPurchases(packageName: Self.package).voidedPurchases ?? []
            #expect(voided.map(\.purchaseToken) == [forgotten.token])
            #expect(voided.first?.voidedReason == .unacknowledgedPurchase)
            #expect(
                try await api.listVoidedPurchases(packageName: Self.package, includeSubscriptions: false).voidedPurchases?.isEmpty ?? true,
                "type 0 lists one-time products only"
            )
            #expect(await Self.notifications(store, forgotten.token) == [.purchased, .revoked])

            let other = await store.createAccount()
            let kept = try await store.subscribe(productId: "vip_monthly", account: other.id)
            try await api.acknowledgeSubscription(packageName: Self.package, subscriptionId: "vip_monthly", token: kept.token)
            let expiry = try #require(try await api.getSubscription(packageName: Self.package, token: kept.token).expiryTime)
            let moved = try await api.deferSubscription(
                packageName: Self.package,
                subscriptionId: "vip_monthly",
                token: kept.token,
                expected: expiry,
                desired: expiry.addingTimeInterval(7 * Self.day)
            )
            #expect(moved == expiry.addingTimeInterval(7 * Self.day))
            #expect(try await api.getSubscription(packageName: Self.package, token: kept.token).expiryTime == moved)
            await #expect(throws: PlayDeveloperAPIError.self, "a stale expected expiry is refused") {
                _ = try await api.deferSubscription(
                    packageName: Self.package,
                    subscriptionId: "vip_monthly",
                    token: kept.token,
                    expected: expiry,
                    desired: expiry.addingTimeInterval(14 * Self.day)
                )
            }
            try await api.revokeSubscription(packageName: Self.package, token: kept.token, .fullRefund)
            let revoked = try await api.getSubscription(packageName: Self.package, token: kept.token)
            #expect(revoked.subscriptionState == .expired)
            #expect(revoked.canceledStateContext?.developerInitiatedCancellation != nil)
            #expect(await Self.notifications(store, kept.token) == [.purchased, .deferred, .revoked])
            let all = try await api.listVoidedPurchases(packageName: Self.package).voidedPurchases ?? []
            #expect(all.last?.purchaseToken == kept.token && all.last?.voidedSource == .developer)
        }
    }

    @Test func planChangesMakeAChainOfTokens() async throws {
        try await withSimulator { store, api in
            let account = await store.createAccount()
            let monthly = try await store.subscribe(productId: "vip_monthly", account: account.id, obfuscatedAccountId: "order-3")
            try await api.acknowledgeSubscription(packageName: Self.package, subscriptionId: "vip_monthly", token: monthly.token)
            await store.advance(by: 10 * Self.day)

            // Upgrade to yearly at full price: a new token, linked to the old one, which ends now.
            let yearly = try await store.changePlan(from: monthly.token, to: "vip_yearly", mode: .chargeFullPrice)
            #expect(yearly.token != monthly.token)
            var read = try await api.getSubscription(packageName: Self.package, token: yearly.token)
            #expect(read.linkedPurchaseToken == monthly.token)
            #expect(read.subscriptionState == .active)
            #expect(read.acknowledgementState == .pending, "the new token must be acknowledged")
            #expect(read.externalAccountIdentifiers?.obfuscatedExternalAccountId == "order-3", "the app's id carries over")
            #expect(
                read.lineItems?.first?.itemReplacement
                    == ItemReplacement(productId: "vip_monthly", basePlanId: "monthly", replacementMode: .chargeFullPrice)
            )
            #expect(read.expiryTime == Self.date("2027-10-11T00:00:00Z"), "a full year from the change")
            let old = try await api.getSubscription(packageName: Self.package, token: monthly.token)
            #expect(old.subscriptionState == .expired)
            #expect(old.canceledStateContext?.replacementCancellation != nil)
            try await api.acknowledgeSubscription(packageName: Self.package, subscriptionId: "vip_yearly", token: yearly.token)

            // Down again with time proration: the yearly plan's unused time buys monthly time at the monthly price.
            await store.advance(by: 30 * Self.day)
            let back = try await store.changePlan(from: yearly.token, to: "vip_monthly", mode: .withTimeProration)
            read = try await api.getSubscription(packageName: Self.package, token: back.token)
            #expect(read.linkedPurchaseToken == yearly.token, "each link names the one before: monthly ← yearly ← monthly")
            let unused = Self.date("2027-10-11T00:00:00Z").timeIntervalSince(await store.now)
            let credited = try #require(read.expiryTime).timeIntervalSince(await store.now)
            // 49.99 a year is 4.166 a month; at 4.99 a month the unused value buys 83.5 % of the time.
            #expect(abs(credited - unused * (49_990.0 / 12) / 4_990) < 1)
            #expect(credited < unused)
            #expect(await Self.notifications(store, back.token) == [.purchased])
            #expect(try await api.getSubscription(packageName: Self.package, token: yearly.token).subscriptionState == .expired)
            // An ended token cannot be changed from again.
            await #expect(throws: PlayStoreError.self) { try await store.changePlan(from: yearly.token, to: "vip_monthly", mode: .chargeFullPrice) }
        }
    }
}
