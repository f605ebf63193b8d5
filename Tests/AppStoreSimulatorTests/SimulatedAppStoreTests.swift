import AppStoreSimulator
import AppStoreWire
import Foundation
import Testing

@Suite struct SimulatedAppStoreTests {
    static let monthly = SimulatorHarness.monthly
    static let yearly = SimulatorHarness.yearly
    static let day = SimulatorHarness.day
    static let catalogURL = SimulatorHarness.catalogURL

    func world(seed: UInt64 = 7) async throws -> SimulatorHarness { try await SimulatorHarness(seed: seed) }

    func verifiedEvents(_ world: SimulatorHarness, from index: Int = 0) async throws -> [String] {
        try await world.verifiedEvents(from: index)
    }

    func transaction(
        _ notification: SimulatedNotification,
        _ world: SimulatorHarness
    ) async throws
        -> JWSTransactionDecodedPayload
    {
        try await world.transaction(notification)
    }

    // MARK: Tests

    @Test func trialRenewalsBillingFailureGraceAndRecovery() async throws {
        let world = try await world()
        let account = try await world.store.createAccount()
        let token = UUID()
        let purchase = try await world.store.purchase(productId: Self.monthly, account: account.id, appAccountToken: token)
        let first = try await world.verifier.verifyTransaction(purchase.signedTransaction)
        #expect(first.offerType == .introductory)
        #expect(first.offerDiscountType == .freeTrial)
        #expect(first.price == 0)
        #expect(first.appAccountToken == token.uuidString.lowercased())
        #expect(first.expiresDate == first.purchaseDate.map { $0 + 7 * Self.day })

        try await world.store.advance(by: 7 * Self.day + 1)  // the trial converts to a paid month
        try await world.store.advance(by: 31 * Self.day)  // a second paid month
        try await world.store.setBillingFails(true, account: account.id)
        try await world.store.advance(by: 31 * Self.day)  // the next renewal fails: grace (16 days)
        #expect(try await world.store.subscriptionState(first.originalTransactionId!) == .gracePeriod)
        try await world.store.setBillingFails(false, account: account.id)
        try await world.store.advance(by: 2 * Self.day)  // recovered within grace

        let events = try await verifiedEvents(world)
        #expect(
            events == [
                "SUBSCRIBED/INITIAL_BUY", "DID_RENEW", "DID_RENEW", "DID_FAIL_TO_RENEW/GRACE_PERIOD", "DID_RENEW/BILLING_RECOVERY",
            ]
        )
        let sent = await world.store.sentNotifications()
        let recovered = try await transaction(sent[4], world)
        let failedAt = try await transaction(sent[3], world).expiresDate!
        // Recovery within grace keeps the paid days continuous: the new period starts at the missed renewal.
        #expect(recovered.purchaseDate == failedAt)
        #expect(recovered.transactionReason == .renewal)
        #expect(recovered.originalTransactionId == first.originalTransactionId)
        #expect(sent[3].payload.data?.status == .billingGracePeriod)
        let renewal = try await world.verifier.verifyRenewalInfo(try #require(sent[3].payload.data?.signedRenewalInfo))
        #expect(renewal.gracePeriodExpiresDate == failedAt + 16 * Self.day)
        #expect(renewal.isInBillingRetryPeriod == true)
    }

    @Test func graceExpiresThenBillingRetryGivesUpAfterSixtyDays() async throws {
        let world = try await world()
        let account = try await world.store.createAccount()
        let purchase = try await world.store.purchase(productId: Self.yearly, account: account.id)
        try await world.store.setBillingFails(true, account: account.id)
        try await world.store.advance(by: 366 * Self.day + 17 * Self.day)
        #expect(try await world.store.subscriptionState(purchase.transaction.originalTransactionId!) == .billingRetry)
        try await world.store.advance(by: 60 * Self.day)
        let events = try await verifiedEvents(world)
        #expect(events == ["SUBSCRIBED/INITIAL_BUY", "DID_FAIL_TO_RENEW/GRACE_PERIOD", "GRACE_PERIOD_EXPIRED", "EXPIRED/BILLING_RETRY"])
    }

    @Test func vipACrossgradeToVipBIsImmediateAndMarksTheOldTransactionUpgraded() async throws {
        let world = try await world()
        let account = try await world.store.createAccount()
        let vipA = try await world.store.purchase(productId: "com.example.storekeeper.vipA", account: account.id)
        try await world.store.advance(by: 3 * Self.day)
        let vipB = try await world.store.purchase(productId: "com.example.storekeeper.vipB", account: account.id)
        #expect(vipB.transaction.originalTransactionId == vipA.transaction.originalTransactionId)
        #expect(vipB.transaction.transactionId != vipA.transaction.transactionId)
        let oldA = try await world.store.transaction(vipA.transaction.transactionId!)
        #expect(oldA.isUpgraded == true)
        let events = try await verifiedEvents(world)
        #expect(events == ["SUBSCRIBED/INITIAL_BUY", "DID_CHANGE_RENEWAL_PREF/UPGRADE"])
        // Renewals continue on vipB only.
        try await world.store.advance(by: 31 * Self.day)
        let renewal = try await transaction(try #require(await world.store.sentNotifications().last), world)
        #expect(renewal.productId == "com.example.storekeeper.vipB")
    }

    @Test func downgradeTakesEffectAtRenewal() async throws {
        let world = try await world()
        let account = try await world.store.createAccount()
        let yearly = try await world.store.purchase(productId: Self.yearly, account: account.id)
        let answer = try await world.store.purchase(productId: Self.monthly, account: account.id)
        #expect(answer.transaction.transactionId == yearly.transaction.transactionId)  // nothing charged yet
        try await world.store.advance(by: 366 * Self.day)
        let events = try await verifiedEvents(world)
        #expect(events == ["SUBSCRIBED/INITIAL_BUY", "DID_CHANGE_RENEWAL_PREF/DOWNGRADE", "DID_RENEW"])
        let renewed = try await transaction(try #require(await world.store.sentNotifications().last), world)
        #expect(renewed.productId == Self.monthly)
        #expect(renewed.transactionReason == .renewal)
        // The introductory offer is not offered on a downgrade within a group already used.
        #expect(renewed.offerType == nil)
    }

    @Test func cancelExpireAndResubscribeWithoutASecondTrial() async throws {
        let world = try await world()
        let account = try await world.store.createAccount()
        let first = try await world.store.purchase(productId: Self.monthly, account: account.id)
        try await world.store.setAutoRenew(false, originalTransactionId: first.transaction.originalTransactionId!)
        try await world.store.advance(by: 8 * Self.day)
        let again = try await world.store.purchase(productId: Self.monthly, account: account.id)
        #expect(again.transaction.originalTransactionId == first.transaction.originalTransactionId)
        #expect(again.transaction.offerType == nil)
        #expect(again.transaction.price == 9990)
        let events = try await verifiedEvents(world)
        #expect(
            events == [
                "SUBSCRIBED/INITIAL_BUY", "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "EXPIRED/VOLUNTARY",
                "SUBSCRIBED/RESUBSCRIBE",
            ]
        )
    }

    @Test func coinsRefundRequestConsumptionRequestRefundAndReversal() async throws {
        let world = try await world()
        let account = try await world.store.createAccount()
        let coins = try await world.store.purchase(productId: "com.example.storekeeper.coins.60", account: account.id)
        let id = try #require(coins.transaction.transactionId)
        #expect(coins.transaction.type == .consumable)
        try await world.store.requestRefund(transactionId: id, reason: .unintendedPurchase)
        try await world.store.advance(by: Self.day)
        try await world.store.decideRefund(transactionId: id, approve: true)
        try await world.store.reverseRefund(transactionId: id)
        let events = try await verifiedEvents(world)
        #expect(events == ["ONE_TIME_CHARGE", "CONSUMPTION_REQUEST", "REFUND", "REFUND_REVERSED"])
        let sent = await world.store.sentNotifications()
        #expect(sent[1].payload.data?.consumptionRequestReason == .unintendedPurchase)
        let refunded = try await transaction(sent[2], world)
        #expect(refunded.revocationDate != nil)
        #expect(refunded.revocationType == .refundFull)
        let reinstated = try await transaction(sent[3], world)
        #expect(reinstated.revocationDate == nil)
        // A declined request leaves the purchase alone.
        let chapter = try await world.store.purchase(productId: "com.example.storekeeper.chapter.2", account: account.id)
        try await world.store.requestRefund(transactionId: chapter.transaction.transactionId!)
        try await world.store.decideRefund(transactionId: chapter.transaction.transactionId!, approve: false)
        #expect(try await verifiedEvents(world, from: 4) == ["ONE_TIME_CHARGE", "CONSUMPTION_REQUEST", "REFUND_DECLINED"])
        await #expect(throws: SimulatorError.self) {
            _ = try await world.store.purchase(productId: "com.example.storekeeper.chapter.2", account: account.id)
        }
    }

    @Test func sameSeedAndScriptGiveTheSameRun() async throws {
        func run(seed: UInt64) async throws -> [ResponseBodyV2DecodedPayload] {
            let world = try await world(seed: seed)
            let account = try await world.store.createAccount()
            _ = try await world.store.purchase(productId: Self.monthly, account: account.id, appAccountToken: nil)
            _ = try await world.store.purchase(productId: "com.example.storekeeper.coins.300", account: account.id)
            try await world.store.advance(by: 40 * Self.day)
            return await world.store.sentNotifications().map(\.payload).map { payload in
                // Signatures are randomized (ECDSA); everything else must match.
                var stripped = payload
                stripped.data?.signedTransactionInfo = nil
                stripped.data?.signedRenewalInfo = nil
                return stripped
            }
        }
        let first = try await run(seed: 42)
        #expect(first.count == 4)
        #expect(try await run(seed: 42) == first)
        #expect(try await run(seed: 43).map(\.notificationUUID) != first.map(\.notificationUUID))
    }

    @Test func catalogValidationRefusesImpossibleProducts() throws {
        var catalog = try SimulatorCatalog.load(from: Self.catalogURL)
        catalog.products.append(catalog.products[0])
        #expect(throws: SimulatorError.self) { try catalog.validate() }
        var noGroup = try SimulatorCatalog.load(from: Self.catalogURL)
        noGroup.products[4].groupId = "missing"
        #expect(throws: SimulatorError.self) { try noGroup.validate() }
        var badGrace = try SimulatorCatalog.load(from: Self.catalogURL)
        badGrace.subscriptionGroups[0].gracePeriodDays = 5
        #expect(throws: SimulatorError.self) { try badGrace.validate() }
    }
}
