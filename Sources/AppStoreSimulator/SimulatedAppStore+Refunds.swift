import AppStoreWire
import Foundation

/// Refund requests, Apple's decisions on them, and reversals (seeds 001 and 004).
extension SimulatedAppStore {
    /// The customer asks Apple for a refund: Apple asks the developer for consumption information
    /// (`CONSUMPTION_REQUEST`) and, for a subscription, turns auto-renew off (`DID_CHANGE_RENEWAL_STATUS`).
    public func requestRefund(transactionId: String, reason: ConsumptionRequestReason = .unintendedPurchase) throws {
        guard let transaction = transactions[transactionId], transaction.revocationDate == nil else {
            throw SimulatorError.unknownTransaction(transactionId)
        }
        let subscription = transaction.originalTransactionId.flatMap { subscriptions[$0] }
        try notify(
            .consumptionRequest,
            nil,
            transaction: transaction,
            renewal: subscription.map(renewalInfo),
            status: subscription?.state.status,
            consumptionRequestReason: reason
        )
        if let subscription, subscription.autoRenew {
            try setAutoRenew(false, originalTransactionId: subscription.originalTransactionId)
        }
    }

    /// Apple decides a refund request: `REFUND` (the transaction is revoked) or `REFUND_DECLINED`. With
    /// `proratedPercentage` (milliunits of a percent: 1 to 99,999) the refund is `REFUND_PRORATED` for that share of
    /// the price (API 1.19); without, `REFUND_FULL`.
    public func decideRefund(
        transactionId: String,
        approve: Bool,
        reason: RevocationReason = .otherReason,
        proratedPercentage: Int? = nil
    ) throws {
        if let proratedPercentage, !(1..<100_000).contains(proratedPercentage) {
            throw SimulatorError.notAllowed("a prorated share is 1 to 99999 milliunits of a percent, not \(proratedPercentage)")
        }
        guard var transaction = transactions[transactionId] else { throw SimulatorError.unknownTransaction(transactionId) }
        guard approve else {
            // For a subscription, notify adds its status and renewal info, as Apple's REFUND_DECLINED carries them.
            try notify(.refundDeclined, nil, transaction: transaction, renewal: nil, status: nil)
            return
        }
        guard transaction.revocationDate == nil else { throw SimulatorError.notAllowed("\(transactionId) is already refunded") }
        transaction.revocationDate = now
        transaction.revocationReason = reason
        transaction.revocationType = proratedPercentage == nil ? .refundFull : .refundProrated
        transaction.revocationPercentage = proratedPercentage.map { Int32($0) }
        transactions[transactionId] = transaction
        modified(transactionId)
        var status: SubscriptionStatus?
        var renewal: JWSRenewalInfoDecodedPayload?
        if let originalId = transaction.originalTransactionId, var subscription = subscriptions[originalId],
            subscription.latestTransactionId == transactionId
        {
            // A refunded current period ends the subscription at once; Apple reports it revoked (status 5), not
            // expired, from then on.
            subscription.state = .revoked
            subscription.autoRenew = false
            subscription.expiresDate = now
            subscriptions[originalId] = subscription
            status = .revoked
            renewal = renewalInfo(subscription)
        }
        try notify(.refund, nil, transaction: transaction, renewal: renewal, status: status)
        // A refunded purchase is no longer shared: the family loses its copies.
        try revokeShared(where: { _ in true }, source: transaction.originalTransactionId ?? transactionId)
    }

    /// Apple reverses a refund after a dispute: `REFUND_REVERSED`, and the transaction stands again.
    public func reverseRefund(transactionId: String) throws {
        guard var transaction = transactions[transactionId], transaction.revocationDate != nil else {
            throw SimulatorError.notAllowed("\(transactionId) is not refunded")
        }
        transaction.revocationDate = nil
        transaction.revocationReason = nil
        transaction.revocationType = nil
        transaction.revocationPercentage = nil
        transactions[transactionId] = transaction
        modified(transactionId)
        var status: SubscriptionStatus?
        var renewal: JWSRenewalInfoDecodedPayload?
        if let originalId = transaction.originalTransactionId, var subscription = subscriptions[originalId],
            subscription.latestTransactionId == transactionId, let expires = transaction.expiresDate
        {
            // Reinstated with its renewal date unchanged (reference §3).
            subscription.expiresDate = expires
            subscription.state = expires > now ? .active : .expired
            subscriptions[originalId] = subscription
            status = subscription.state.status
            renewal = renewalInfo(subscription)
        }
        try notify(.refundReversed, nil, transaction: transaction, renewal: renewal, status: status)
    }
}
