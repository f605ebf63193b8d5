import Foundation
import StorekeeperCore
import Testing

/// The lifecycle rules: every store-neutral kind has a plan, and what can be batched follows from the plan.
@Suite struct LifecycleRulesTests {
    static let now = Date(timeIntervalSince1970: 2_000_000_000)

    static func transaction(revoked: Date? = nil, expires: Date? = nil, refundedSeats: Int? = nil) -> VerifiedTransaction {
        var commerce = TransactionCommerce()
        commerce.refundedSeats = refundedSeats
        return VerifiedTransaction(
            transactionId: "t1",
            originalTransactionId: "o1",
            bundleId: "app",
            productId: "monthly",
            environment: .production,
            purchaseDate: now - 86_400,
            expiresDate: expires ?? now + 29 * 86_400,
            revocationDate: revoked,
            source: .signedTransaction,
            commerce: commerce
        )
    }

    static func message(
        _ kind: StoreMessage.Kind,
        source: StoreMessage.Source = .notification,
        focus: VerifiedTransaction? = transaction(),
        grace: Date? = nil
    ) -> StoreMessage {
        let snapshot = focus.map {
            SubscriptionSnapshot(
                originalTransactionId: $0.originalTransactionId,
                bundleId: "app",
                productId: $0.productId,
                environment: .production,
                gracePeriodExpiresAt: grace,
                event: "test",
                signedDate: now
            )
        }
        return StoreMessage(
            id: "m1",
            source: source,
            kind: kind,
            label: "test",
            bundleId: "app",
            environment: .production,
            signedDate: now,
            transactions: focus.map { [$0] } ?? [],
            cancelled: source == .receipt ? [focus].compactMap { $0 }.filter { $0.revocationDate != nil } : [],
            focus: focus,
            snapshot: kind.updatesSubscription ? snapshot : nil
        )
    }

    /// One of each kind: every kind either changes something or says why it only records.
    static let everyKind: [StoreMessage.Kind] = [
        .purchased, .renewed(recovered: false), .renewed(recovered: true), .planChanged(.startsNow), .planChanged(.fromNextRenewal),
        .offerRedeemed(.startsNow), .offerRedeemed(.fromNextRenewal), .renewalStatusChanged, .billingFailed(gracePeriod: true),
        .billingFailed(gracePeriod: false), .gracePeriodExpired, .expired, .priceChange, .refunded(.purchase), .refunded(.seats),
        .refundDeclined, .refundReversed, .revoked, .renewalExtended, .consumptionQuestion(reason: "UNINTENDED_PURCHASE"),
        .seatsReleased(["s1"]), .consentRescinded(install: "i1"), .status, .informational("test"),
    ]

    @Test func everyKindActsOrSaysWhyNot() {
        for kind in Self.everyKind {
            let plan = LifecyclePlanner.plan(Self.message(kind, grace: Self.now + 86_400))
            let acts = !plan.deliver.isEmpty || !plan.steps.isEmpty || plan.state != nil
            #expect(acts || plan.recordOnly != nil, "\(kind)")
        }
    }

    @Test func theStepsThatMoveMoney() {
        let refund = LifecyclePlanner.plan(Self.message(.refunded(.purchase), focus: Self.transaction(revoked: Self.now - 60)))
        #expect(refund.steps.first == .takeBack(Self.transaction(revoked: Self.now - 60), from: Self.now - 60, as: .refund))
        #expect(refund.steps.contains(.closeRefundQuestion(transactionId: "t1", decision: .refunded)))
        #expect(!refund.isBatchable)
        // A seat refund takes back seats, not the purchaser's subscription.
        let seats = LifecyclePlanner.plan(Self.message(.refunded(.seats), focus: Self.transaction(refundedSeats: 2)))
        #expect(!seats.steps.contains { if case .takeBack = $0 { true } else { false } })
        #expect(seats.steps.contains(.refundSeats(Self.transaction(refundedSeats: 2), seats: 2)))
        let revoke = LifecyclePlanner.plan(Self.message(.revoked))
        #expect(revoke.steps == [.takeBack(Self.transaction(), from: Self.now, as: .revoke)])
        #expect(LifecyclePlanner.plan(Self.message(.refundReversed)).steps == [.reinstate(transactionId: "t1")])
        #expect(!LifecyclePlanner.plan(Self.message(.planChanged(.startsNow))).deliver.isEmpty)
        #expect(LifecyclePlanner.plan(Self.message(.planChanged(.fromNextRenewal))).deliver.isEmpty)
        // Grace keeps service to the grace period's end; billing retry without grace does not.
        let grace = LifecyclePlanner.plan(Self.message(.billingFailed(gracePeriod: true), grace: Self.now + 86_400))
        #expect(grace.steps.count == 1)
        #expect(LifecyclePlanner.plan(Self.message(.billingFailed(gracePeriod: false))).steps.isEmpty)
        #expect(StoreMessage.Kind.billingFailed(gracePeriod: true).impliedState == .gracePeriod)
        #expect(StoreMessage.Kind.billingFailed(gracePeriod: false).impliedState == .billingRetry)
        #expect(LifecyclePlanner.plan(Self.message(.consumptionQuestion(reason: nil))).steps.count == 1)
        // A status check that finds a refund no notification brought takes it back; a plain one is batchable.
        #expect(LifecyclePlanner.plan(Self.message(.status, source: .statusCheck, focus: Self.transaction(revoked: Self.now))).steps.count == 1)
        #expect(LifecyclePlanner.plan(Self.message(.status, source: .statusCheck)).isBatchable)
        #expect(SubscriptionState(appleStatus: 4) == .gracePeriod)
    }

    @Test func aReceiptTakesBackEveryCancelledEntryAndDeliversTheRest() {
        let cancelled = Self.transaction(revoked: Self.now - 3_600)
        let plan = LifecyclePlanner.plan(Self.message(.renewalStatusChanged, source: .receipt, focus: cancelled))
        #expect(plan.deliver == [cancelled])
        #expect(plan.steps == [.takeBack(cancelled, from: Self.now - 3_600, as: .refund)])
        let revoked = LifecyclePlanner.plan(Self.message(.revoked, source: .receipt, focus: cancelled))
        #expect(revoked.steps == [.takeBack(cancelled, from: Self.now - 3_600, as: .revoke)])
        #expect(LifecyclePlanner.plan(Self.message(.renewed(recovered: false), source: .receipt)).isBatchable)
    }

    @Test func onlyDeliveriesAndStateAreBatchable() {
        for kind in Self.everyKind {
            let plan = LifecyclePlanner.plan(Self.message(kind, grace: Self.now + 86_400))
            #expect(plan.isBatchable == plan.steps.isEmpty, "\(kind)")
        }
        #expect(LifecyclePlanner.plan(Self.message(.seatsReleased(["s1"]))).steps == [.releaseSeats(["s1"])])
        #expect(LifecyclePlanner.plan(Self.message(.consentRescinded(install: "i1"))).steps == [.consentRescinded(install: "i1")])
    }

    @Test func consumptionAnswers() {
        let now = Date(timeIntervalSince1970: 2_000_000_000)
        let coins = ConsumptionAnswer.build(
            .init(kind: .consumable, delivered: true, coinsCredited: 60, balance: 15, now: now),
            sampleContentProvided: false,
            preference: "GRANT_PRORATED"
        )
        #expect(coins.consumptionPercentage == 75_000)
        #expect(coins.deliveryStatus == "DELIVERED")
        let untouched = ConsumptionAnswer.build(
            .init(kind: .consumable, delivered: true, coinsCredited: 60, balance: 200, now: now),
            sampleContentProvided: false,
            preference: "GRANT_PRORATED"
        )
        #expect(untouched.consumptionPercentage == 0)
        #expect(untouched.refundPreference == "GRANT_FULL")
        let pass = ConsumptionAnswer.build(
            .init(kind: .nonRenewing, delivered: true, periodStart: now - 10 * 86_400, periodEnd: now + 30 * 86_400, now: now),
            sampleContentProvided: true,
            preference: nil
        )
        #expect(pass.consumptionPercentage == 25_000)
        let subscription = ConsumptionAnswer.build(
            .init(kind: .autoRenewable, delivered: true, now: now),
            sampleContentProvided: true,
            preference: "DECLINE"
        )
        #expect(subscription.consumptionPercentage == nil)
        let lost = ConsumptionAnswer.build(.init(kind: nil, delivered: false, now: now), sampleContentProvided: false, preference: "DECLINE")
        #expect(lost.deliveryStatus == "UNDELIVERED_OTHER")
        #expect(CoinClawbackPolicy.floor.clawback(refunded: 60, balance: 15) == (15, 45))
        #expect(CoinClawbackPolicy.debt.clawback(refunded: 60, balance: 15) == (60, 0))
    }
}
