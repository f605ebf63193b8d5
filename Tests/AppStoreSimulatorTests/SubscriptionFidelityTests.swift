import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import Foundation
import Testing

/// Places where the simulator once differed from Apple: statuses after refunds, what refund notifications carry,
/// cancelling a downgrade, the app transaction's purchase date, and the renewal info's newer fields.
@Suite struct SubscriptionFidelityTests {
    typealias H = SimulatorHarness
    static let coins = "com.example.storekeeper.coins.60"

    @Test func aRefundedSubscriptionIsRevokedNotExpired() async throws {
        let h = try await H()
        let account = try await h.store.createAccount()
        let yearly = try await h.store.purchase(productId: H.yearly, account: account.id)
        let original = try #require(yearly.transaction.originalTransactionId)
        try await h.store.advance(by: 3 * H.day)
        try await h.store.decideRefund(transactionId: try #require(yearly.transaction.transactionId), approve: true)

        let refund = try await h.last()
        #expect(refund.type == .refund)
        #expect(refund.payload.data?.status == .revoked)
        #expect(try await h.store.subscriptionState(original) == .revoked)
        let statuses = try await h.store.subscriptionStatuses(anyTransactionId: original)
        let item = try #require(statuses.data?.first?.lastTransactions?.first)
        #expect(item.status == .revoked)
        #expect(try await h.verifier.verifyTransaction(try #require(item.signedTransactionInfo)).revocationDate != nil)
        // The status filter sees it as 5, not 2.
        #expect(try await h.store.subscriptionStatuses(anyTransactionId: original, statuses: [.revoked]).data?.isEmpty == false)
        #expect(try await h.store.subscriptionStatuses(anyTransactionId: original, statuses: [.expired]).data?.isEmpty == true)
        // Buying again in the group is a resubscription, as after any lapse.
        _ = try await h.store.purchase(productId: H.yearly, account: account.id)
        #expect(try await h.verifiedEvents().last == "SUBSCRIBED/RESUBSCRIBE")
    }

    /// Each renewal's expiry as a UTC calendar date, for the account's subscription in one group.
    static func expiries(_ h: H, account: String, productId: String) async throws -> [String] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return await h.store.transactions(account: account).filter { $0.productId == productId }.compactMap(\.expiresDate).map {
            let day = calendar.dateComponents([.year, .month, .day], from: $0)
            return String(format: "%04d-%02d-%02d", day.year!, day.month!, day.day!)
        }
    }

    @Test func monthlyRenewalsKeepTheBillingDayAcrossShortMonths() async throws {
        // Bought on 30 January 2026: February has no 30th, March has.
        let h = try await H(start: Date(timeIntervalSince1970: 1_769_774_400))
        let account = try await h.store.createAccount()
        let standard = H.monthly + ".standard"
        _ = try await h.store.purchase(productId: standard, account: account.id)
        try await h.store.advance(by: 370 * H.day)
        #expect(
            try await Self.expiries(h, account: account.id, productId: standard).prefix(13) == [
                "2026-02-28", "2026-03-30", "2026-04-30", "2026-05-30", "2026-06-30", "2026-07-30", "2026-08-30",
                "2026-09-30", "2026-10-30", "2026-11-30", "2026-12-30", "2027-01-30", "2027-02-28",
            ]
        )
    }

    @Test func theTwelfthPaymentOfACommitmentEndsWithTheCommitment() async throws {
        // Bought on 31 January 2026 on the monthly plan of a yearly subscription.
        let h = try await H(start: Date(timeIntervalSince1970: 1_769_860_800))
        let account = try await h.store.createAccount()
        let first = try await h.store.purchase(productId: H.yearly, account: account.id, options: PurchaseOptions(billingPlan: .monthly))
        let commitmentEnds = try #require(first.transaction.commitmentInfo?.commitmentExpiresDate)
        try await h.store.advance(by: 340 * H.day)
        let payments = await h.store.transactions(account: account.id).filter { $0.productId == H.yearly }
        #expect(payments.count == 12)
        #expect(payments.last?.commitmentInfo?.billingPeriodNumber == 12)
        #expect(payments.last?.expiresDate == commitmentEnds)
        #expect(
            try await Self.expiries(h, account: account.id, productId: H.yearly) == [
                "2026-02-28", "2026-03-31", "2026-04-30", "2026-05-31", "2026-06-30", "2026-07-31", "2026-08-31",
                "2026-09-30", "2026-10-31", "2026-11-30", "2026-12-31", "2027-01-31",
            ]
        )
    }

    @Test func aTrialThenMonthsBillsOnTheDayTheTrialEnded() async throws {
        // A one-week trial from 25 January ends on 1 February; months then renew on the 1st.
        let h = try await H(start: Date(timeIntervalSince1970: 1_769_774_400 - 5 * 86_400))
        let account = try await h.store.createAccount()
        _ = try await h.store.purchase(productId: H.monthly, account: account.id)
        try await h.store.advance(by: 70 * H.day)
        #expect(
            try await Self.expiries(h, account: account.id, productId: H.monthly).prefix(4) == [
                "2026-02-01", "2026-03-01", "2026-04-01", "2026-05-01",
            ]
        )
    }

    @Test func everyNotificationAboutASubscriptionCarriesStatusAndRenewalInfo() async throws {
        let h = try await H()
        let account = try await h.store.createAccount()
        let trial = try await h.store.purchase(productId: H.monthly, account: account.id)
        try await h.store.advance(by: 8 * H.day)  // the trial converts to a paid month
        let paid = try #require(await h.store.transactions(account: account.id).last?.transactionId)
        let start = await h.store.sentNotifications().count

        // Declined, an older period refunded, the current period refunded and the refund reversed.
        try await h.store.requestRefund(transactionId: paid)
        try await h.store.decideRefund(transactionId: paid, approve: false)
        try await h.store.decideRefund(transactionId: try #require(trial.transaction.transactionId), approve: true)
        try await h.store.decideRefund(transactionId: paid, approve: true)
        try await h.store.reverseRefund(transactionId: paid)
        // The same for a consumable, which has neither status nor renewal info.
        let coins = try await h.store.purchase(productId: Self.coins, account: account.id).transaction.transactionId!
        try await h.store.requestRefund(transactionId: coins)
        try await h.store.decideRefund(transactionId: coins, approve: false)
        try await h.store.decideRefund(transactionId: coins, approve: true)
        try await h.store.reverseRefund(transactionId: coins)

        let sent = Array(await h.store.sentNotifications()[start...])
        let events = try await h.verifiedEvents(from: start)
        #expect(
            events.filter { $0.hasPrefix("REFUND") } == [
                "REFUND_DECLINED", "REFUND", "REFUND", "REFUND_REVERSED", "REFUND_DECLINED", "REFUND", "REFUND_REVERSED",
            ]
        )
        for (notification, event) in zip(sent, events) {
            let transaction = try await h.transaction(notification)
            if transaction.type == .autoRenewable {
                #expect(notification.payload.data?.status != nil, "\(event) without status")
                let renewal = try await h.renewalInfo(notification)
                #expect(renewal.originalTransactionId == transaction.originalTransactionId, "\(event)")
            } else {
                #expect(notification.payload.data?.status == nil, "\(event) with a status")
                #expect(notification.payload.data?.signedRenewalInfo == nil, "\(event) with renewal info")
            }
        }
        let subscriptionEvents = zip(sent, events).filter { $0.0.payload.data?.signedRenewalInfo != nil }
        #expect(
            subscriptionEvents.map(\.1) == [
                "CONSUMPTION_REQUEST", "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "REFUND_DECLINED", "REFUND", "REFUND",
                "REFUND_REVERSED",
            ]
        )
        #expect(subscriptionEvents.map { $0.0.payload.data?.status } == [.active, .active, .active, .active, .revoked, .active])
    }

    @Test func choosingTheCurrentPlanAgainCancelsAPendingDowngrade() async throws {
        let h = try await H()
        let account = try await h.store.createAccount()
        let yearly = try await h.store.purchase(productId: H.yearly, account: account.id)
        let original = try #require(yearly.transaction.originalTransactionId)
        _ = try await h.store.purchase(productId: H.monthly, account: account.id)
        #expect(try await h.renewalInfo(try await h.last()).autoRenewProductId == H.monthly)

        let again = try await h.store.purchase(productId: H.yearly, account: account.id)
        #expect(again.transaction.transactionId == yearly.transaction.transactionId)  // nothing is charged
        let cancelled = try await h.last()
        #expect(cancelled.type == .didChangeRenewalPref)
        #expect(cancelled.subtype == nil)
        #expect(cancelled.payload.data?.status == .active)
        let renewal = try await h.renewalInfo(cancelled)
        #expect(renewal.autoRenewProductId == H.yearly)
        #expect(renewal.productId == H.yearly)
        let statuses = try await h.store.subscriptionStatuses(anyTransactionId: original)
        let served = try await h.verifier.verifyRenewalInfo(try #require(statuses.data?.first?.lastTransactions?.first?.signedRenewalInfo))
        #expect(served.autoRenewProductId == H.yearly)
        // Nothing is pending any more: the same purchase once more is refused, and the renewal stays yearly.
        await #expect(throws: SimulatorError.self) { try await h.store.purchase(productId: H.yearly, account: account.id) }
        try await h.store.advance(by: 366 * H.day)
        #expect(
            try await h.verifiedEvents() == [
                "SUBSCRIBED/INITIAL_BUY", "DID_CHANGE_RENEWAL_PREF/DOWNGRADE", "DID_CHANGE_RENEWAL_PREF", "DID_RENEW",
            ]
        )
        #expect(try await h.transaction(try await h.last()).productId == H.yearly)
    }

    @Test func appTransactionOriginalPurchaseDateIsWhenTheAccountGotTheApp() async throws {
        let h = try await H()
        let joined = await h.store.currentDate
        let account = try await h.store.createAccount()
        try await h.store.advance(by: 10 * H.day)
        let id = try await h.store.purchase(productId: Self.coins, account: account.id).transaction.transactionId!
        let first = try await h.verifier.verifyAppTransaction(try await h.store.signedAppTransaction(anyTransactionId: id))
        try await h.store.advance(by: 5 * H.day)
        let second = try await h.verifier.verifyAppTransaction(
            try await h.store.signedAppTransaction(anyTransactionId: account.appTransactionId)
        )
        #expect(first.originalPurchaseDate == joined)
        #expect(second.originalPurchaseDate == joined)
        // Apple's sandbox always says 1.0 for the app's version and its original version (issue 30, item 8).
        #expect(first.applicationVersion == "1.0" && first.originalApplicationVersion == "1.0")
        // The receipt itself is issued now, each time.
        #expect(second.receiptCreationDate == (await h.store.currentDate))
        #expect(first.receiptCreationDate != second.receiptCreationDate)
    }

    @Test func recentSubscriptionStartDateSpansLapsesOfUpToSixtyDays() async throws {
        let h = try await H()
        let account = try await h.store.createAccount()
        let started = await h.store.currentDate
        let first = try await h.store.purchase(productId: H.monthly, account: account.id)
        let original = try #require(first.transaction.originalTransactionId)
        func recentStart() async throws -> Date? {
            try await h.verifier.verifyRenewalInfo(try await h.store.signedRenewalInfo(original)).recentSubscriptionStartDate
        }
        #expect(try await recentStart() == started)
        try await h.store.advance(by: 40 * H.day)  // trial, then a paid month
        #expect(try await recentStart() == started)

        // Lapsed for 30 days: the run continues.
        try await h.store.setAutoRenew(false, originalTransactionId: original)
        try await h.store.advance(by: 30 * H.day)
        #expect(try await h.store.subscriptionState(original) == .expired)
        let lapsed = try #require(await h.store.transactions(account: account.id).last?.expiresDate)
        try await h.store.advance(by: lapsed.addingTimeInterval(30 * H.day).timeIntervalSince(await h.store.currentDate))
        _ = try await h.store.purchase(productId: H.monthly, account: account.id)
        #expect(try await recentStart() == started)
        #expect(try await h.renewalInfo(try await h.last()).recentSubscriptionStartDate == started)

        // Lapsed for 90 days: a new run starts at the resubscription.
        try await h.store.setAutoRenew(false, originalTransactionId: original)
        try await h.store.advance(by: 120 * H.day)
        let back = await h.store.currentDate
        _ = try await h.store.purchase(productId: H.monthly, account: account.id)
        #expect(try await recentStart() == back)
    }

    @Test func renewalInfoCarriesTheOfferPeriodOfTheNextRenewal() async throws {
        let h = try await H()
        let account = try await h.store.createAccount()
        let first = try await h.store.purchase(productId: H.monthly, account: account.id)
        let original = try #require(first.transaction.originalTransactionId)
        try await h.store.advance(by: 8 * H.day)
        var renewal = try await h.verifier.verifyRenewalInfo(try await h.store.signedRenewalInfo(original))
        #expect(renewal.offerType == nil && renewal.offerPeriod == nil)
        // Three discounted months from the next renewal on.
        _ = try await h.store.purchase(productId: H.monthly, account: account.id, options: .init(offer: .promotional(id: "winback-50")))
        renewal = try await h.renewalInfo(try await h.last())
        #expect(renewal.offerType == .promotional)
        #expect(renewal.offerIdentifier == "winback-50")
        #expect(renewal.offerDiscountType == .payAsYouGo)
        #expect(renewal.offerPeriod == "P3M")
        // The renewal the offer applies to says the same in its transaction.
        try await h.store.advance(by: 31 * H.day)
        let renewed = try await h.transaction(try await h.last())
        #expect(renewed.offerIdentifier == "winback-50")
        #expect(renewed.offerPeriod == "P3M")
    }

    @Test func lapsedSubscribersSeeTheWinBackOffersTheyMayRedeem() async throws {
        var catalog = try SimulatorCatalog.load(from: H.catalogURL)
        for index in catalog.products.indices {
            switch catalog.products[index].id {
            case H.monthly:
                catalog.products[index].winBackOffers = [
                    .init(id: "come-back-half", discountType: .payAsYouGo, period: .init(value: 1, unit: .month), periodCount: 2, price: 4990),
                    .init(id: "come-back-free", discountType: .freeTrial, period: .init(value: 2, unit: .week), price: 0),
                ]
            case H.yearly:
                catalog.products[index].winBackOffers = [
                    .init(id: "yearly-back", discountType: .payUpFront, period: .init(value: 1, unit: .year), price: 59_990)
                ]
            default: break
            }
        }
        // The catalog format declares them too.
        let decoded = try JSONDecoder().decode(SimulatorCatalog.self, from: JSONEncoder().encode(catalog))
        #expect(decoded.product(H.monthly)?.winBackOffers?.map(\.id) == ["come-back-half", "come-back-free"])

        let chain = try AppStoreSigningChain.generate(.init(name: "Win-back"))
        let store = try SimulatedAppStore(catalog: catalog, signingChain: chain, seed: 3)
        let verifier = try SignedDataVerifier(
            configuration: .init(
                bundleId: catalog.bundleId,
                environments: [.sandbox],
                roots: try TrustedRoots.only([chain.root]),
                deployment: .development
            )
        )
        let account = try await store.createAccount()
        let original = try #require(try await store.purchase(productId: H.monthly, account: account.id).transaction.originalTransactionId)
        func eligible() async throws -> [String]? {
            try await verifier.verifyRenewalInfo(try await store.signedRenewalInfo(original)).eligibleWinBackOfferIds
        }
        #expect(try await eligible() == nil)  // subscribed: nothing to win back
        try await store.setAutoRenew(false, originalTransactionId: original)
        try await store.advance(by: 8 * H.day)
        let expired = try #require(await store.sentNotifications().last)
        #expect(expired.type == .expired)
        let expiredRenewal = try await verifier.verifyRenewalInfo(try #require(expired.payload.data?.signedRenewalInfo))
        // The lapsed product's offers first, then the group's others by level.
        #expect(expiredRenewal.eligibleWinBackOfferIds == ["come-back-half", "come-back-free", "yearly-back"])
        #expect(try await eligible() == ["come-back-half", "come-back-free", "yearly-back"])

        // Redeemed once, an offer is no longer offered.
        let back = try await store.purchase(productId: H.monthly, account: account.id, options: .init(offer: .winBack(id: "come-back-free")))
        #expect(back.transaction.offerType == .winBack)
        #expect(try await eligible() == nil)
        try await store.setAutoRenew(false, originalTransactionId: original)
        try await store.advance(by: 60 * H.day)
        #expect(try await eligible() == ["come-back-half", "yearly-back"])
    }
}
