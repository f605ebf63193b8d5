import AppStoreWire
import Foundation
import StorekeeperCore

/// Apple's unified receipts as ``StoreMessage``: V1 notifications once `verifyReceipt` confirmed them, and
/// `verifyReceipt`'s answer about one subscription. A confirmed receipt is the whole truth, so its source is
/// ``StoreMessage/Source/receipt``: every entry is delivered and every cancelled one taken back.
extension StoreMessage {
    /// Apple's V1 notification type as a kind (V1 has no subtypes; the receipt's entries tell the rest).
    static func kind(v1 type: NotificationTypeV1?) -> Kind {
        switch type {
        case .initialBuy: .purchased
        case .didRenew, .interactiveRenewal, .renewal: .renewed(recovered: false)
        case .didRecover: .renewed(recovered: true)
        case .cancel, .refund: .refunded(.purchase)
        case .revoke: .revoked
        case .didChangeRenewalStatus: .renewalStatusChanged
        case .didChangeRenewalPref: .planChanged(.fromNextRenewal)
        case .priceIncreaseConsent: .priceChange
        case .didFailToRenew: .billingFailed(gracePeriod: false)
        case .consumptionRequest: .consumptionQuestion(reason: nil)
        default: .informational("unknown V1 notification type \(type?.rawValue ?? "(none)")")
        }
    }

    /// A V1 notification as Apple's `verifyReceipt` confirmed it: the body (unsigned, so only a hint) gives the type and
    /// the subscription it is about; the entries and renewal info come from Apple's answer for its `latest_receipt`.
    /// Only auto-renewable transactions are delivered from it (what V1 notifications are about); cancellations of
    /// any confirmed entry are taken back.
    static func v1(
        id: String,
        body: ResponseBodyV1,
        confirmed response: VerifyReceiptResponse,
        bundleId: String,
        receivedAt: Date,
        isAutoRenewable: (String) -> Bool
    ) -> StoreMessage {
        let entries = (response.latestReceiptInfo ?? []) + (response.receipt?.inApp ?? [])
        var message = legacy(
            id: id,
            kind: kind(v1: body.notificationType),
            label: "V1 \(body.notificationType?.rawValue ?? "UNKNOWN")",
            environment: StoreEnvironment(storeName: response.environment?.rawValue ?? "Production"),
            entries: entries,
            pending: response.pendingRenewalInfo ?? [],
            original: body.originalTransactionId,
            autoRenew: body.autoRenewStatus.map { $0 == "true" },
            autoRenewProductId: body.autoRenewProductId,
            bundleId: bundleId,
            receivedAt: receivedAt
        )
        message.transactions = message.transactions.filter { isAutoRenewable($0.productId) }
        if let focus = message.focus, !isAutoRenewable(focus.productId) {
            message.focus = nil
            message.snapshot = nil
        }
        return message
    }

    /// A V1 notification Apple could not confirm: stored and visible, applied to nothing.
    static func v1Unconfirmed(id: String, body: ResponseBodyV1, bundleId: String, receivedAt: Date, reason: String) -> StoreMessage {
        StoreMessage(
            id: id,
            source: .receipt,
            kind: .informational(reason),
            label: "V1 \(body.notificationType?.rawValue ?? "UNKNOWN")",
            bundleId: bundleId,
            environment: body.environment == "PROD" ? .production : .sandbox,
            signedDate: receivedAt,
            transactions: [],
            focus: nil,
            snapshot: nil
        )
    }

    /// What `verifyReceipt` says of one subscription now (the renewal sweep for apps without a Server API key):
    /// delivered and applied like a status from Get All Subscription Statuses. A receipt a client sent is dated by
    /// its latest purchase (`datedByPurchase`), so any notification Apple sent after that still wins the merge.
    static func receiptStatus(
        original: String,
        response: VerifyReceiptResponse,
        bundleId: String,
        now: Date,
        datedByPurchase: Bool = false
    ) -> StoreMessage {
        var message = legacy(
            id: "receipt:\(original):\(Int64(now.timeIntervalSince1970 * 1000))",
            kind: .status,
            label: "verifyReceipt",
            environment: StoreEnvironment(storeName: response.environment?.rawValue ?? "Production"),
            entries: response.latestReceiptInfo ?? [],
            pending: response.pendingRenewalInfo ?? [],
            original: original,
            autoRenew: nil,
            autoRenewProductId: nil,
            bundleId: bundleId,
            receivedAt: now
        )
        if datedByPurchase, let purchased = message.focus?.purchaseDate { message.snapshot?.signedDate = purchased }
        return message
    }

    private static func legacy(
        id: String,
        kind: Kind,
        label: String,
        environment: StoreEnvironment,
        entries: [LegacyTransaction],
        pending pendingInfo: [LegacyPendingRenewalInfo],
        original: String?,
        autoRenew: Bool?,
        autoRenewProductId: String?,
        bundleId: String,
        receivedAt: Date
    ) -> StoreMessage {
        var seen = Set<String>()
        var transactions: [VerifiedTransaction] = []
        for entry in entries {
            guard let transaction = VerifiedTransaction(legacy: entry, bundleId: bundleId, environment: environment),
                seen.insert(transaction.transactionId).inserted
            else { continue }
            transactions.append(transaction)
        }
        // The body's original transaction is a hint: it must be among the confirmed entries to be followed.
        let original = original ?? transactions.first?.originalTransactionId
        let ofOriginal = transactions.filter { $0.originalTransactionId == original }
        let focus = ofOriginal.max { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
        var snapshot: SubscriptionSnapshot?
        if let focus, focus.expiresDate != nil, kind.updatesSubscription {
            let pending = pendingInfo.first { $0.originalTransactionId == focus.originalTransactionId }
            let grace = pending?.gracePeriodExpiresDateValue
            var state: SubscriptionState
            var reason: String?
            if focus.revocationDate != nil && kind != .revoked {
                state = .refunded
                reason = "REFUNDED"
            } else if kind == .revoked {
                state = .revoked
            } else if let grace, grace > receivedAt, pending?.isInBillingRetryPeriodValue == true {
                state = .gracePeriod
            } else if pending?.isInBillingRetryPeriodValue == true {
                state = .billingRetry
            } else if let expires = focus.expiresDate, expires > receivedAt {
                state = .active
            } else {
                state = .expired
                reason = pending?.expirationIntentValue.map { Self.reason(intent: ExpirationIntent(rawValue: Int32($0))) }
            }
            snapshot = SubscriptionSnapshot(
                originalTransactionId: focus.originalTransactionId,
                bundleId: bundleId,
                productId: focus.productId,
                subscriptionGroup: focus.subscriptionGroup,
                environment: environment,
                state: state,
                expirationReason: reason,
                autoRenew: autoRenew ?? pending?.autoRenewStatusValue,
                autoRenewProductId: autoRenewProductId ?? pending?.autoRenewProductId,
                expiresAt: focus.expiresDate,
                gracePeriodExpiresAt: grace,
                offerType: focus.offerType,
                latestTransactionId: focus.transactionId,
                event: label,
                signedDate: receivedAt
            )
        }
        return StoreMessage(
            id: id,
            source: .receipt,
            kind: kind,
            label: label,
            bundleId: bundleId,
            environment: environment,
            signedDate: receivedAt,
            transactions: transactions,
            cancelled: transactions.filter { $0.revocationDate != nil },
            focus: focus,
            snapshot: snapshot
        )
    }
}
