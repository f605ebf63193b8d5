import AppStoreWire
import Foundation
import StorekeeperCore
import StorekeeperStorage
import Testing

@testable import StorekeeperServer

/// Apple's notification types as store-neutral kinds: every type and subtype Apple documents (reference §2, §3) has
/// a kind, and the ones that move money map to the kinds whose plans move it.
@Suite struct AppleMessageMappingTests {
    /// Reference §3: notificationType → subtypes (nil: no subtype).
    static let v2: [(NotificationTypeV2, [Subtype?])] = [
        (.subscribed, [.initialBuy, .resubscribe]), (.didRenew, [nil, .billingRecovery]),
        (.didChangeRenewalPref, [.upgrade, .downgrade, nil]), (.didChangeRenewalStatus, [.autoRenewEnabled, .autoRenewDisabled, nil]),
        (.offerRedeemed, [nil, .upgrade, .downgrade]), (.didFailToRenew, [nil, .gracePeriod]), (.gracePeriodExpired, [nil]),
        (.expired, [.voluntary, .billingRetry, .priceIncrease, .productNotForSale, nil]), (.priceIncrease, [.pending, .accepted]),
        (.priceChange, [nil]), (.refund, [nil, .seats]), (.refundDeclined, [nil]), (.refundReversed, [nil]), (.revoke, [nil]),
        (.consumptionRequest, [nil]), (.renewalExtended, [nil]), (.renewalExtension, [.summary, .failure]), (.oneTimeCharge, [nil]),
        (.metadataUpdate, [nil]), (.migration, [nil]), (.rescindConsent, [nil]), (.externalPurchaseToken, [.unreported]),
        (.test, [nil]), (.unclaimSeats, [nil]),
    ]

    @Test func everyV2TypeAndSubtypeHasAKind() {
        #expect(Set(Self.v2.map(\.0)) == Set(NotificationTypeV2.knownValues))
        for (type, subtypes) in Self.v2 {
            for subtype in subtypes {
                if case .informational(let why) = StoreMessage.kind(type, subtype) {
                    #expect(!why.hasPrefix("unknown"), "\(type)/\(subtype?.rawValue ?? "-")")
                }
            }
        }
        #expect(StoreMessage.kind("SOMETHING_NEW", nil) == .informational("unknown notification type SOMETHING_NEW"))
    }

    @Test func everyV1TypeHasAKind() {
        for type in NotificationTypeV1.knownValues {
            if case .informational = StoreMessage.kind(v1: type) { Issue.record("\(type) has no kind") }
        }
    }

    @Test func theTypesThatMoveMoney() {
        #expect(StoreMessage.kind(.refund, nil) == .refunded(.purchase))
        #expect(StoreMessage.kind(.refund, .seats) == .refunded(.seats))
        #expect(StoreMessage.kind(.revoke, nil) == .revoked)
        #expect(StoreMessage.kind(.refundReversed, nil) == .refundReversed)
        #expect(StoreMessage.kind(.didChangeRenewalPref, .upgrade) == .planChanged(.startsNow))
        #expect(StoreMessage.kind(.didChangeRenewalPref, .downgrade) == .planChanged(.fromNextRenewal))
        #expect(StoreMessage.kind(.didFailToRenew, .gracePeriod) == .billingFailed(gracePeriod: true))
        #expect(StoreMessage.kind(.didRenew, .billingRecovery) == .renewed(recovered: true))
        #expect(StoreMessage.kind(v1: .cancel) == .refunded(.purchase))
        #expect(StoreMessage.kind(v1: .didRecover) == .renewed(recovered: true))
    }

    @Test func theAnalyticsCountChurnFailuresAndRecoveries() {
        let count = StoreMessage.appleLifecycleCounting.count
        #expect(count("EXPIRED", "VOLUNTARY") == .voluntaryChurn)
        #expect(count("EXPIRED", "BILLING_RETRY") == .billingChurn)
        #expect(count("EXPIRED", "PRICE_INCREASE") == nil)
        #expect(count("DID_FAIL_TO_RENEW", "GRACE_PERIOD") == .billingFailure(gracePeriod: true))
        #expect(count("DID_FAIL_TO_RENEW", nil) == .billingFailure(gracePeriod: false))
        #expect(count("DID_RENEW", "BILLING_RECOVERY") == .recovery)
        #expect(count("DID_RENEW", nil) == nil)
    }
}
