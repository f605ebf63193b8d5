import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import Foundation
import Testing

/// Offers, Ask to Buy, Family Sharing, price increases, extensions, products leaving sale, and ground truth.
@Suite struct SimulatorFeatureTests {
    typealias H = SimulatorHarness

    // MARK: Tests

    @Test func promotionalOfferOnAnActiveSubscriptionIsRedeemedAtRenewal() async throws {
        let h = try await H()
        let account = try await h.store.createAccount()
        let first = try await h.store.purchase(productId: H.monthly, account: account.id)
        try await h.store.advance(by: 8 * H.day)  // trial over, paying
        _ = try await h.store.purchase(
            productId: H.monthly,
            account: account.id,
            options: .init(offer: .promotional(id: "winback-50"))
        )
        let redeemed = try await h.last()
        #expect(redeemed.type == .offerRedeemed)
        #expect(try await h.renewalInfo(redeemed).offerType == .promotional)
        try await h.store.advance(by: 31 * H.day)
        let renewal = try await h.transaction(try await h.last())
        #expect(renewal.offerType == .promotional)
        #expect(renewal.offerIdentifier == "winback-50")
        #expect(renewal.offerDiscountType == .payAsYouGo)
        #expect(renewal.price == 4990)
        #expect(renewal.originalTransactionId == first.transaction.originalTransactionId)
        #expect(try await h.verifiedEvents() == ["SUBSCRIBED/INITIAL_BUY", "DID_RENEW", "OFFER_REDEEMED", "DID_RENEW"])
        // A promotional offer cannot start a first subscription, and a win-back needs a lapsed subscriber.
        let newcomer = try await h.store.createAccount()
        await #expect(throws: SimulatorError.self) {
            _ = try await h.store.purchase(
                productId: H.yearly,
                account: newcomer.id,
                options: .init(offer: .promotional(id: "winback-50"))
            )
        }
    }

    @Test func restoreGivesBackCurrentEntitlementsOnly() async throws {
        let h = try await H()
        let account = try await h.store.createAccount()
        let chapter = try await h.store.purchase(productId: "com.example.storekeeper.chapter.2", account: account.id)
        _ = try await h.store.purchase(productId: "com.example.storekeeper.coins.60", account: account.id)
        _ = try await h.store.purchase(productId: H.monthly, account: account.id)
        try await h.store.advance(by: 8 * H.day)
        let restored = try await h.store.restore(account: account.id)
        let products = try await restored.asyncMap { try await h.verifier.verifyTransaction($0) }
        #expect(Set(products.compactMap(\.productId)) == [H.monthly, "com.example.storekeeper.chapter.2"])
        #expect(products.filter { $0.productId == H.monthly }.count == 1)  // the latest period only
        try await h.store.decideRefund(transactionId: chapter.transaction.transactionId!, approve: true)
        #expect(try await h.store.restore(account: account.id).count == 1)
    }

    @Test func askToBuyWaitsForTheOrganizer() async throws {
        let h = try await H()
        let child = try await h.store.createAccount()
        let request = try await h.store.requestAskToBuy(productId: "com.example.storekeeper.chapter.2", account: child.id)
        #expect(await h.store.sentNotifications().isEmpty)
        let purchase = try await h.store.approveAskToBuy(request)
        #expect(purchase.transaction.productId == "com.example.storekeeper.chapter.2")
        let declined = try await h.store.requestAskToBuy(productId: "com.example.storekeeper.coins.60", account: child.id)
        try await h.store.declineAskToBuy(declined)
        #expect(try await h.verifiedEvents() == ["ONE_TIME_CHARGE"])
        await #expect(throws: SimulatorError.self) { _ = try await h.store.approveAskToBuy(declined) }
    }

    @Test func familySharingAndRevoke() async throws {
        var catalog = try SimulatorCatalog.load(from: H.catalogURL)
        for index in catalog.products.indices where catalog.products[index].id == H.yearly {
            catalog.products[index].familyShareable = true
        }
        let chain = try AppStoreSigningChain.generate()
        let store = try SimulatedAppStore(catalog: catalog, signingChain: chain, seed: 3)
        let verifier = try SignedDataVerifier(
            configuration: .init(
                bundleId: catalog.bundleId,
                environments: [.sandbox],
                roots: try TrustedRoots.only([chain.root]),
                deployment: .development
            )
        )
        let parent = try await store.createAccount()
        let child = try await store.createAccount()
        try await store.createFamily([parent.id, child.id])
        _ = try await store.purchase(productId: H.yearly, account: parent.id)
        let shared = try #require(await store.transactions(account: child.id).first)
        #expect(shared.inAppOwnershipType == .familyShared)
        #expect(try await store.groundTruth(account: child.id).isEntitled(to: H.yearly))
        try await store.leaveFamily(account: child.id)
        let revoke = try #require(await store.sentNotifications().last)
        #expect(revoke.type == .revoke)
        let revoked = try await verifier.verifyTransaction(try #require(revoke.payload.data?.signedTransactionInfo))
        #expect(revoked.revocationType == .familyRevoke)
        #expect(revoke.payload.data?.status == .revoked)
        #expect(try await store.groundTruth(account: child.id).isEntitled(to: H.yearly) == false)
        #expect(try await store.groundTruth(account: parent.id).isEntitled(to: H.yearly))
        for notification in await store.sentNotifications() {
            _ = try await verifier.verifyNotification(notification.signedPayload)
        }
    }

    @Test func priceIncreaseWithoutConsentLapsesAndWithConsentRenews() async throws {
        let h = try await H()
        let declining = try await h.store.createAccount()
        let agreeing = try await h.store.createAccount()
        let a = try await h.store.purchase(productId: H.yearly, account: declining.id)
        let b = try await h.store.purchase(productId: H.yearly, account: agreeing.id)
        try await h.store.raisePrice(productId: H.yearly, to: 119_990, requiresConsent: true)
        try await h.store.consentToPriceIncrease(originalTransactionId: b.transaction.originalTransactionId!)
        try await h.store.advance(by: 366 * H.day)
        #expect(try await h.store.subscriptionState(a.transaction.originalTransactionId!) == .expired)
        #expect(try await h.store.subscriptionState(b.transaction.originalTransactionId!) == .active)
        let events = try await h.verifiedEvents(from: 2)
        #expect(events.filter { $0.hasPrefix("PRICE_INCREASE") } == ["PRICE_INCREASE/PENDING", "PRICE_INCREASE/PENDING", "PRICE_INCREASE/ACCEPTED"])
        #expect(events.contains("EXPIRED/PRICE_INCREASE"))
        #expect(events.contains("DID_RENEW"))
        let renewed = try await h.store.transactions(account: agreeing.id).last
        #expect(renewed?.price == 119_990)
    }

    @Test func renewalDateExtensionsSingleAndMass() async throws {
        let h = try await H()
        let account = try await h.store.createAccount()
        let other = try await h.store.createAccount()
        let yearly = try await h.store.purchase(productId: H.yearly, account: account.id)
        _ = try await h.store.purchase(productId: H.yearly, account: other.id)
        let before = try #require(yearly.transaction.expiresDate)
        let result = try await h.store.extendRenewalDate(originalTransactionId: yearly.transaction.originalTransactionId!, days: 30)
        #expect(result.success)
        #expect(result.effectiveDate == before + 30 * H.day)
        #expect(try await h.last().type == .renewalExtended)
        let mass = try await h.store.extendRenewalDateForAll(productId: H.yearly, days: 7, requestIdentifier: "req-1")
        #expect(mass.succeededCount == 2)
        let again = try await h.store.extendRenewalDateForAll(productId: H.yearly, days: 7, requestIdentifier: "req-1")
        #expect(again == mass)  // reusing the identifier changes nothing
        let summary = try await h.last()
        #expect(summary.type == .renewalExtension)
        #expect(summary.subtype == .summary)
        let verified = try await h.verifier.verifyNotification(summary.signedPayload)
        #expect(verified.summary?.succeededCount == 2)
        #expect(verified.summary?.requestIdentifier == "req-1")
        // A trialing subscription is not extendable.
        let trialist = try await h.store.createAccount()
        let trial = try await h.store.purchase(productId: H.monthly, account: trialist.id)
        #expect(trial.transaction.offerDiscountType == .freeTrial)
        let refused = try await h.store.extendRenewalDate(originalTransactionId: trial.transaction.originalTransactionId!, days: 3)
        #expect(!refused.success)
    }

    @Test func productTakenOffSaleExpiresAtRenewal() async throws {
        let h = try await H()
        let account = try await h.store.createAccount()
        let purchase = try await h.store.purchase(productId: H.yearly, account: account.id)
        try await h.store.setForSale(false, productId: H.yearly)
        let newcomer = try await h.store.createAccount()
        await #expect(throws: SimulatorError.self) { _ = try await h.store.purchase(productId: H.yearly, account: newcomer.id) }
        try await h.store.advance(by: 366 * H.day)
        #expect(try await h.verifiedEvents() == ["SUBSCRIBED/INITIAL_BUY", "EXPIRED/PRODUCT_NOT_FOR_SALE"])
        let info = try await h.renewalInfo(try await h.last())
        #expect(info.expirationIntent == .productNotAvailable)
        #expect(try await h.store.subscriptionState(purchase.transaction.originalTransactionId!) == .expired)
    }

    @Test func sandboxRenewalCapStopsRenewing() async throws {
        let h = try await H()
        await h.store.setRenewalLimit(12)
        let account = try await h.store.createAccount()
        _ = try await h.store.purchase(productId: H.yearly, account: account.id)
        try await h.store.advance(by: 20 * 366 * H.day)
        let events = try await h.verifiedEvents()
        #expect(events.filter { $0 == "DID_RENEW" }.count == 12)
        #expect(events.last == "EXPIRED/VOLUNTARY")
    }

    @Test func groundTruthFollowsRefundsUpgradesPassesAndGrace() async throws {
        let h = try await H()
        let account = try await h.store.createAccount()
        let token = UUID()
        let coins = try await h.store.purchase(
            productId: "com.example.storekeeper.coins.300",
            account: account.id,
            options: .init(appAccountToken: token, quantity: 3)
        )
        _ = try await h.store.purchase(productId: "com.example.storekeeper.coins.60", account: account.id, options: .init(appAccountToken: token))
        _ = try await h.store.purchase(productId: "com.example.storekeeper.pass.month", account: account.id)
        _ = try await h.store.purchase(productId: "com.example.storekeeper.pass.month", account: account.id)
        var truth = try await h.store.groundTruth(account: account.id)
        #expect(truth.consumables == ["com.example.storekeeper.coins.300": 3, "com.example.storekeeper.coins.60": 1])
        // Two stacked monthly passes: about two months of access.
        let passEnd = try #require(truth.entitlements["com.example.storekeeper.pass.month"] ?? nil)
        let start = await h.store.currentDate
        #expect(passEnd > start + 58 * H.day && passEnd < start + 63 * H.day)
        try await h.store.decideRefund(transactionId: coins.transaction.transactionId!, approve: true)
        truth = try await h.store.groundTruth(account: account.id)
        #expect(truth.consumables["com.example.storekeeper.coins.300"] == nil)
        #expect(await h.store.groundTruth(appAccountToken: token).consumables == ["com.example.storekeeper.coins.60": 1])

        let vipA = try await h.store.purchase(productId: "com.example.storekeeper.vipA", account: account.id)
        try await h.store.advance(by: 2 * H.day)
        _ = try await h.store.purchase(productId: "com.example.storekeeper.vipB", account: account.id)
        truth = try await h.store.groundTruth(account: account.id)
        #expect(truth.isEntitled(to: "com.example.storekeeper.vipB"))
        #expect(!truth.isEntitled(to: "com.example.storekeeper.vipA"))  // replaced at once, not two paid periods
        #expect(
            try await h.store.groundTruth(account: account.id, at: vipA.transaction.purchaseDate! + H.day).isEntitled(
                to: "com.example.storekeeper.vipA"
            )
        )

        // Grace keeps the entitlement; billing retry after grace does not.
        let member = try await h.store.createAccount()
        let yearly = try await h.store.purchase(productId: H.yearly, account: member.id)
        try await h.store.setBillingFails(true, account: member.id)
        try await h.store.advance(by: 366 * H.day + H.day)
        #expect(try await h.store.groundTruth(account: member.id).isEntitled(to: H.yearly))
        try await h.store.advance(by: 20 * H.day)
        #expect(!(try await h.store.groundTruth(account: member.id).isEntitled(to: H.yearly)))
        #expect(try await h.store.subscriptionState(yearly.transaction.originalTransactionId!) == .billingRetry)
    }
}

/// Apple's sandbox renewal rate and the real-time clock.
@Suite struct SandboxRateTests {
    typealias H = SimulatorHarness

    @Test func sandboxRateCompressesPeriodsGraceAndRetries() async throws {
        let h = try await H()
        await h.store.setTimeScale(.sandboxRate)
        let account = try await h.store.createAccount()
        let yearly = try await h.store.purchase(productId: H.yearly, account: account.id)
        #expect(yearly.transaction.expiresDate == yearly.transaction.purchaseDate! + 3_600)  // 1 year = 1 hour
        try await h.store.advance(by: 3_600)
        let renewed = try await h.transaction(try await h.last())
        #expect(renewed.expiresDate == renewed.purchaseDate! + 3_600)
        try await h.store.setBillingFails(true, account: account.id)
        try await h.store.advance(by: 3_600)
        let failed = try await h.last()
        #expect(failed.subtype == .gracePeriod)
        // 16 days of grace at 30 days = 5 minutes: 160 seconds.
        #expect(try await h.renewalInfo(failed).gracePeriodExpiresDate == renewed.expiresDate! + 160)
        #expect(try await h.verifiedEvents() == ["SUBSCRIBED/INITIAL_BUY", "DID_RENEW", "DID_FAIL_TO_RENEW/GRACE_PERIOD"])
    }

    @Test func realTimeClockMovesTheSimulatorClock() async throws {
        let h = try await H()
        let start = await h.store.currentDate
        let service = RealTimeClockService(store: h.store, tick: .milliseconds(20))
        let task = Task { try await service.run() }
        let wall = ContinuousClock()
        let began = wall.now
        // Poll rather than sleep a fixed time: a loaded test run may not schedule the service at once.
        while await h.store.currentDate.timeIntervalSince(start) < 0.2, wall.now - began < .seconds(60) {
            try await Task.sleep(for: .milliseconds(50))
        }
        task.cancel()
        let moved = await h.store.currentDate.timeIntervalSince(start)
        let elapsed = wall.now - began
        #expect(moved > 0.2)
        // The simulated clock never runs ahead of the wall clock at calendar scale.
        #expect(moved <= Double(elapsed.components.seconds) + 1)
    }
}
