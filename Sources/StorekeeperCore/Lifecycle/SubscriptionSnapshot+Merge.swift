import Foundation

extension SubscriptionSnapshot {
    /// `snapshot` folded over what is stored: fields the snapshot leaves nil keep their stored values; a grace
    /// period end only while in grace; an expiry reason only while expired or refunded; the offer follows the latest
    /// transaction. The caller applies snapshots in `signedDate` order and skips one older than the stored state
    /// (``isNewer(than:)``), so a late, older message never rolls state back.
    public static func merge(_ snapshot: SubscriptionSnapshot, into existing: SubscriptionSnapshot?) -> SubscriptionSnapshot {
        guard let existing else { return snapshot }
        var merged = snapshot
        if merged.state == nil { merged.state = existing.state }
        if merged.state == .expired || merged.state == .refunded {
            merged.expirationReason = snapshot.expirationReason ?? existing.expirationReason
        }
        merged.autoRenew = snapshot.autoRenew ?? existing.autoRenew
        merged.autoRenewProductId = snapshot.autoRenewProductId ?? existing.autoRenewProductId
        merged.expiresAt = snapshot.expiresAt ?? existing.expiresAt
        merged.gracePeriodExpiresAt =
            merged.state == .gracePeriod ? (snapshot.gracePeriodExpiresAt ?? existing.gracePeriodExpiresAt) : nil
        merged.subscriptionGroup = snapshot.subscriptionGroup ?? existing.subscriptionGroup
        merged.latestTransactionId = snapshot.latestTransactionId ?? existing.latestTransactionId
        merged.priceIncrease = snapshot.priceIncrease ?? existing.priceIncrease
        // The billing plan follows the latest transaction; a message that does not say (a legacy receipt's)
        // keeps the stored plan.
        if snapshot.billingPlan == nil {
            merged.billingPlan = existing.billingPlan
            merged.commitment = existing.commitment
        }
        if snapshot.offerType == nil && snapshot.offerId == nil && snapshot.latestTransactionId == nil {
            merged.offerType = existing.offerType
            merged.offerId = existing.offerId
        }
        return merged
    }

    /// Whether this snapshot may be applied over `stored`: Apple's later (or equal) word wins.
    public func isNewer(than stored: SubscriptionSnapshot?) -> Bool {
        guard let stored else { return true }
        return signedDate >= stored.signedDate
    }
}
