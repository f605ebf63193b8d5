import Foundation
import StorekeeperCore
import Testing

/// The ledger's decisions as pure functions: the same inputs give the same answer, with no database involved.
@Suite struct SubscriptionMergeTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func snapshot(
        _ state: SubscriptionState?,
        at seconds: Double,
        reason: String? = nil,
        grace: Date? = nil,
        autoRenew: Bool? = nil,
        offerId: String? = nil,
        latest: String? = nil
    ) -> SubscriptionSnapshot {
        SubscriptionSnapshot(
            originalTransactionId: "o",
            bundleId: "b",
            productId: "p",
            environment: .sandbox,
            state: state,
            expirationReason: reason,
            autoRenew: autoRenew,
            gracePeriodExpiresAt: grace,
            offerId: offerId,
            latestTransactionId: latest,
            event: "E",
            signedDate: t0 + seconds
        )
    }

    @Test func aLaterWordWinsAndAnEarlierOneIsStale() {
        let stored = Self.snapshot(.expired, at: 30)
        #expect(Self.snapshot(.active, at: 40).isNewer(than: stored))
        #expect(Self.snapshot(.active, at: 30).isNewer(than: stored), "the same moment is applied (idempotent)")
        #expect(!Self.snapshot(.active, at: 20).isNewer(than: stored))
        #expect(Self.snapshot(.active, at: 0).isNewer(than: nil))
    }

    @Test func whatASnapshotLeavesOutKeepsItsStoredValue() {
        let stored = Self.snapshot(.gracePeriod, at: 10, grace: Self.t0 + 99, autoRenew: false, offerId: "intro", latest: "t1")
        let merged = SubscriptionSnapshot.merge(Self.snapshot(nil, at: 20), into: stored)
        #expect(merged.state == .gracePeriod)
        #expect(merged.gracePeriodExpiresAt == Self.t0 + 99, "still in grace: its end is kept")
        #expect(merged.autoRenew == false)
        #expect(merged.offerId == "intro", "no new transaction: the offer stays")
        #expect(merged.signedDate == Self.t0 + 20)
    }

    @Test func leavingGraceDropsItsEndAndAnExpiryKeepsItsReason() {
        let stored = Self.snapshot(.expired, at: 10, reason: "VOLUNTARY", grace: Self.t0 + 5)
        let active = SubscriptionSnapshot.merge(Self.snapshot(.active, at: 20, latest: "t2"), into: stored)
        #expect(active.gracePeriodExpiresAt == nil)
        #expect(active.expirationReason == nil, "an active subscription has no expiry reason")
        #expect(active.offerId == nil, "a new transaction brings its own offer (none)")
        let stillExpired = SubscriptionSnapshot.merge(Self.snapshot(.expired, at: 20), into: stored)
        #expect(stillExpired.expirationReason == "VOLUNTARY")
    }
}

@Suite struct RevocationRulesTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func refundsAndReversalsInEveryOrder() {
        // First refund: generation 1.
        #expect(RevocationRules.revoke(given: nil, decidedAt: Self.t0) == .revoke(generation: 1))
        let revoked = RevocationRules.Record(status: "revoked", decidedAt: Self.t0 + 10, generation: 1)
        #expect(RevocationRules.revoke(given: revoked, decidedAt: Self.t0 + 20) == .unchanged, "a second refund changes nothing")
        #expect(RevocationRules.reinstate(given: revoked, decidedAt: Self.t0 + 20) == .reinstate)
        #expect(RevocationRules.reinstate(given: revoked, decidedAt: Self.t0 + 5) == .unchanged, "a reversal older than the refund")
        let reinstated = RevocationRules.Record(status: "reinstated", decidedAt: Self.t0 + 20, generation: 1)
        #expect(RevocationRules.revoke(given: reinstated, decidedAt: Self.t0 + 15) == .unchanged, "a late refund before the reversal")
        #expect(RevocationRules.revoke(given: reinstated, decidedAt: Self.t0 + 30) == .revoke(generation: 2), "a new refund")
        #expect(RevocationRules.reinstate(given: reinstated, decidedAt: Self.t0 + 30) == .unchanged)
        #expect(RevocationRules.reinstate(given: nil, decidedAt: Self.t0) == .rememberEarly, "a reversal before its refund")
    }
}

@Suite struct AttributionTests {
    let ann = UserID(rawValue: "ann"), bob = UserID(rawValue: "bob"), cy = UserID(rawValue: "cy")

    @Test func theBindingOutranksTheOrderAndThePolicyDecidesConflicts() {
        #expect(Attribution.decide(orderUser: nil, boundUser: nil, submitter: nil, policy: .refuse) == .unattributed)
        #expect(Attribution.decide(orderUser: nil, boundUser: nil, submitter: ann, policy: .refuse) == .owner(ann))
        #expect(Attribution.decide(orderUser: ann, boundUser: nil, submitter: nil, policy: .refuse) == .owner(ann))
        #expect(Attribution.decide(orderUser: nil, boundUser: ann, submitter: ann, policy: .refuse) == .owner(ann))
        #expect(Attribution.decide(orderUser: nil, boundUser: ann, submitter: bob, policy: .refuse) == .refused(owner: ann, submitter: bob))
        #expect(Attribution.decide(orderUser: nil, boundUser: ann, submitter: bob, policy: .transfer) == .transfer(from: ann, to: bob))
        // An order of another user for a subscription already bound.
        #expect(Attribution.decide(orderUser: cy, boundUser: ann, submitter: nil, policy: .refuse) == .refused(owner: ann, submitter: cy))
        #expect(Attribution.decide(orderUser: cy, boundUser: ann, submitter: nil, policy: .transfer) == .transfer(from: ann, to: cy))
        #expect(Attribution.decide(orderUser: cy, boundUser: ann, submitter: ann, policy: .transfer) == .owner(ann))
    }

    @Test func identitiesCompareByteForByte() {
        // "é" precomposed and decomposed are equal Strings in Swift but different users.
        #expect(UserID(rawValue: "caf\u{e9}") != UserID(rawValue: "cafe\u{301}"))
        #expect(
            Attribution.decide(orderUser: nil, boundUser: UserID(rawValue: "caf\u{e9}"), submitter: UserID(rawValue: "cafe\u{301}"), policy: .refuse)
                == .refused(owner: UserID(rawValue: "caf\u{e9}"), submitter: UserID(rawValue: "cafe\u{301}"))
        )
    }
}

@Suite struct ClawbackTests {
    @Test func debtTakesEverythingFloorStopsAtZero() {
        #expect(CoinClawbackPolicy.debt.clawback(refunded: 100, balance: 30) == (100, 0))
        #expect(CoinClawbackPolicy.floor.clawback(refunded: 100, balance: 30) == (30, 70))
        #expect(CoinClawbackPolicy.floor.clawback(refunded: 100, balance: -5) == (0, 100), "a debt is not deepened")
        #expect(CoinClawbackPolicy.floor.clawback(refunded: 100, balance: 500) == (100, 0))
    }
}

@Suite struct AuditVocabularyTests {
    @Test func actionsAndCausesAreSpelledAsStored() {
        // Stored text is a contract with operators' queries and the console: these spellings must not drift.
        #expect(AuditAction.entitlementGranted.rawValue == "entitlement.granted")
        #expect(AuditAction.subscription(.gracePeriod).rawValue == "subscription.grace_period")
        #expect(AuditAction.wallet(-1) == .walletDebited)
        #expect(AuditAction.wallet(0) == .walletCredited)
        #expect(AuditCause.transaction("42").rawValue == "transaction:42")
        #expect(AuditCause.merge(guest: UserID(rawValue: "guest:x")).rawValue == "merge:guest:x")
    }

    @Test func walletKeysCannotCollideAcrossParts() {
        let a = WalletKey.spend(user: UserID(rawValue: "a:b"), key: "c")
        let b = WalletKey.spend(user: UserID(rawValue: "a"), key: "b:c")
        #expect(a != b)
        #expect(a.rawValue == "spend:a%3Ab:c")
        #expect(WalletKey.spend(user: UserID(rawValue: "plain"), key: "k").rawValue == "spend:plain:k", "old keys still match")
        #expect(WalletKey.refund("t", generation: 2).rawValue == "refund:t:2")
    }
}

@Suite struct OrderMatchTests {
    static let ann = UserID(rawValue: "ann")
    static let bob = UserID(rawValue: "bob")

    static func transaction(token: UUID?, product: String = "unlock") -> VerifiedTransaction {
        VerifiedTransaction(
            transactionId: "t",
            originalTransactionId: "t",
            bundleId: "com.example",
            productId: product,
            environment: .sandbox,
            purchaseDate: Date(timeIntervalSince1970: 1_800_000_000),
            appAccountToken: token,
            source: .signedTransaction
        )
    }

    static func order(_ id: String, user: UserID, product: String = "unlock") -> OrderReference {
        OrderReference(id: id, user: user, bundleId: "com.example", productId: product, appAccountToken: UUID().uuidString.lowercased())
    }

    @Test func theTokensOrderAttributesAndANamedOrderIsOnlyAClaim() {
        let tokenOrder = Self.order("o1", user: Self.ann)
        let byToken = OrderMatch.decide(transaction: Self.transaction(token: UUID()), tokenOrder: tokenOrder, namedOrder: nil, submitter: Self.bob)
        #expect(byToken.order == tokenOrder && byToken.completes)
        // A named order of another user never pulls the transaction to itself; it is ignored and audited.
        let named = Self.order("o2", user: Self.bob)
        let claim = OrderMatch.decide(transaction: Self.transaction(token: nil), tokenOrder: nil, namedOrder: named, submitter: Self.ann)
        #expect(claim.order == nil && claim.ignored == named)
        // The caller's own order for the same product, and no token of the transaction's own: it counts.
        let own = OrderMatch.decide(transaction: Self.transaction(token: nil), tokenOrder: nil, namedOrder: named, submitter: Self.bob)
        #expect(own.order == named && own.completes)
        // Another product: ignored.
        let other = OrderMatch.decide(
            transaction: Self.transaction(token: nil, product: "coins"),
            tokenOrder: nil,
            namedOrder: named,
            submitter: Self.bob
        )
        #expect(other.ignored == named)
        #expect(OrderMatch.ignoredEntry(named, transaction: Self.transaction(token: nil), submitter: Self.ann, at: Date()).action == .orderIgnored)
    }
}
