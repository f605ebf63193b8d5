import Foundation
import StorekeeperCore
import Testing

/// Every notification type and subtype Apple documents (reference §2, §3) has a defined effect.
@Suite struct LifecycleRulesTests {
    /// Reference §3: notificationType → subtypes (nil: no subtype).
    static let v2: [(String, [String?])] = [
        ("SUBSCRIBED", ["INITIAL_BUY", "RESUBSCRIBE"]), ("DID_RENEW", [nil, "BILLING_RECOVERY"]),
        ("DID_CHANGE_RENEWAL_PREF", ["UPGRADE", "DOWNGRADE", nil]),
        ("DID_CHANGE_RENEWAL_STATUS", ["AUTO_RENEW_ENABLED", "AUTO_RENEW_DISABLED", nil]),
        ("OFFER_REDEEMED", [nil, "UPGRADE", "DOWNGRADE"]), ("DID_FAIL_TO_RENEW", [nil, "GRACE_PERIOD"]),
        ("GRACE_PERIOD_EXPIRED", [nil]),
        ("EXPIRED", ["VOLUNTARY", "BILLING_RETRY", "PRICE_INCREASE", "PRODUCT_NOT_FOR_SALE", nil]),
        ("PRICE_INCREASE", ["PENDING", "ACCEPTED"]), ("PRICE_CHANGE", [nil]), ("REFUND", [nil, "SEATS"]), ("REFUND_DECLINED", [nil]),
        ("REFUND_REVERSED", [nil]), ("REVOKE", [nil]), ("CONSUMPTION_REQUEST", [nil]), ("RENEWAL_EXTENDED", [nil]),
        ("RENEWAL_EXTENSION", ["SUMMARY", "FAILURE"]), ("ONE_TIME_CHARGE", [nil]), ("METADATA_UPDATE", [nil]),
        ("MIGRATION", [nil]), ("RESCIND_CONSENT", [nil]), ("EXTERNAL_PURCHASE_TOKEN", ["UNREPORTED"]), ("TEST", [nil]),
        ("UNCLAIM_SEATS", [nil]),
    ]
    static let v1 = [
        "INITIAL_BUY", "CANCEL", "DID_CHANGE_RENEWAL_STATUS", "DID_CHANGE_RENEWAL_PREF", "DID_FAIL_TO_RENEW", "DID_RECOVER",
        "DID_RENEW", "INTERACTIVE_RENEWAL", "RENEWAL", "REFUND", "REVOKE", "CONSUMPTION_REQUEST", "PRICE_INCREASE_CONSENT",
    ]

    @Test func everyV2TypeAndSubtypeIsKnown() {
        for (type, subtypes) in Self.v2 {
            for subtype in subtypes {
                let effect = LifecycleRules.effect(v2: type, subtype: subtype)
                #expect(effect.recordOnly?.hasPrefix("unknown") != true, "\(type)/\(subtype ?? "-")")
                // Every message either changes something or says why it only records.
                let acts =
                    effect.deliver || effect.revoke != nil || effect.reinstate || effect.updatesSubscription
                    || effect.answerConsumptionRequest || effect.closeConsumptionRequest || effect.releaseSeats
                #expect(acts || effect.recordOnly != nil, "\(type)/\(subtype ?? "-")")
            }
        }
        #expect(LifecycleRules.effect(v2: "SOMETHING_NEW", subtype: nil).recordOnly?.hasPrefix("unknown") == true)
    }

    @Test func everyV1TypeIsKnown() {
        for type in Self.v1 {
            #expect(LifecycleRules.effect(v1: type).recordOnly == nil, "\(type)")
        }
    }

    @Test func theEffectsThatMoveMoney() {
        #expect(LifecycleRules.effect(v2: "REFUND", subtype: nil).revoke == .refund)
        // A seat refund takes back seats, not the purchaser's subscription.
        #expect(LifecycleRules.effect(v2: "REFUND", subtype: "SEATS").revoke == nil)
        #expect(LifecycleRules.effect(v2: "REVOKE", subtype: nil).revoke == .revoke)
        #expect(LifecycleRules.effect(v2: "REFUND_REVERSED", subtype: nil).reinstate)
        #expect(LifecycleRules.effect(v2: "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE").deliver)
        #expect(!LifecycleRules.effect(v2: "DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE").deliver)
        #expect(LifecycleRules.effect(v2: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD").impliedState == .gracePeriod)
        #expect(LifecycleRules.effect(v2: "DID_FAIL_TO_RENEW", subtype: nil).impliedState == .billingRetry)
        #expect(LifecycleRules.effect(v2: "CONSUMPTION_REQUEST", subtype: nil).answerConsumptionRequest)
        #expect(LifecycleRules.effect(v1: "CANCEL").revoke == .refund)
        #expect(SubscriptionState(appleStatus: 4) == .gracePeriod)
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
