import AppStoreWire
import Foundation
import StorekeeperCore
import StorekeeperStorage

/// Apple's formats to Storekeeper's: notifications, statuses and receipts as ``AppleMessage``, and transactions as
/// ``VerifiedTransaction`` (from a JWS payload or a receipt entry). The one place Apple's models meet the domain.
extension AppleMessage {
    /// Decodes an inbox row. Rows are stored only after their signatures were verified on arrival (rejected
    /// payloads are never pending), so the stored bytes are decoded here without verifying them again.
    static func decode(_ stored: NotificationInbox.Stored) throws -> AppleMessage {
        let received = stored.received
        switch received.format {
        case "v2":
            struct Body: Decodable { var signedPayload: String }
            let body = try AppStoreJSON.decodePayload(Body.self, from: Array(received.body.utf8))
            let payload = try SignedDataVerifier.decodeUnverifiedPayload(body.signedPayload, as: ResponseBodyV2DecodedPayload.self)
            let transaction = try payload.data?.signedTransactionInfo.map {
                try SignedDataVerifier.decodeUnverifiedPayload($0, as: JWSTransactionDecodedPayload.self)
            }
            let renewal = try payload.data?.signedRenewalInfo.map {
                try SignedDataVerifier.decodeUnverifiedPayload($0, as: JWSRenewalInfoDecodedPayload.self)
            }
            var message = v2(
                id: received.id,
                type: payload.notificationType.rawValue,
                subtype: payload.subtype?.rawValue,
                bundleId: received.bundleId ?? payload.data?.bundleId ?? "",
                environment: payload.claimedIdentity.environment?.rawValue ?? received.environment ?? "Production",
                signedDate: payload.signedDate ?? stored.receivedAt,
                transaction: transaction,
                signedTransaction: payload.data?.signedTransactionInfo,
                renewal: renewal,
                status: payload.data?.status.map { Int($0.rawValue) },
                consumptionReason: payload.data?.consumptionRequestReason?.rawValue
            )
            // Verified on arrival like the rest of the row.
            message.appTransactionId =
                try payload.appData?.signedAppTransactionInfo.map {
                    try SignedDataVerifier.decodeUnverifiedPayload($0, as: AppTransaction.self).appTransactionId
                } ?? nil
            message.unclaimSeatIds = seatClaimIds(payload.unclaimInfo)
            return message
        case "v1":
            // Unsigned: only what verifyReceipt confirms is applied (see V1Confirmation).
            throw StorekeeperError(.internal, code: "unconfirmed_v1", message: "a V1 notification is applied only once Apple confirms it")
        default:
            throw StorekeeperError(.internal, code: "unknown_format", message: "inbox format \(received.format)")
        }
    }

    /// The seat claims an `UNCLAIM_SEATS` names, bounded (a purchase has at most a few thousand seats; ids are UUIDs).
    static func seatClaimIds(_ info: UnclaimInfo?) -> [String] {
        Array((info?.unclaimSeatIds ?? []).filter { !$0.isEmpty && $0.utf8.count <= 100 }.prefix(10_000))
    }

    /// A V2 notification, or a status from Get All Subscription Statuses (`type` `STATUS`).
    static func v2(
        id: String,
        type: String,
        subtype: String?,
        bundleId: String,
        environment: String,
        signedDate: Date,
        transaction: JWSTransactionDecodedPayload?,
        signedTransaction: String?,
        renewal: JWSRenewalInfoDecodedPayload?,
        status: Int?,
        consumptionReason: String?
    ) -> AppleMessage {
        let effect =
            type == "STATUS"
            ? LifecycleEffect(deliver: true, updatesSubscription: true) : LifecycleRules.effect(v2: type, subtype: subtype)
        let verified = transaction.flatMap { VerifiedTransaction(payload: $0, signedData: signedTransaction) }
        var snapshot: SubscriptionSnapshot?
        if let verified, effect.updatesSubscription, transaction?.type == .autoRenewable || renewal != nil {
            var state = status.flatMap(SubscriptionState.init(appleStatus:)) ?? effect.impliedState
            var reason: String?
            if type == "EXPIRED" { reason = subtype ?? renewal?.expirationIntent.map(Self.reason(intent:)) }
            if type == "REFUND" {
                // A refunded current period ends the subscription (Apple reports status 5, revoked); a refunded
                // older period leaves it as it is.
                if state == .expired || state == .revoked || state == nil { state = .refunded }
                reason = "REFUNDED"
            } else if state == .revoked, type != "REVOKE", transaction?.revocationDate != nil,
                transaction?.revocationType != .familyRevoke, transaction?.revocationType != .assignmentRevoke,
                transaction?.inAppOwnershipType != .familyShared, transaction?.inAppOwnershipType != .assigned
            {
                // Status 5 after a refund (a status check, a later notification) is that refund, not a Family
                // Sharing revocation or an organization taking back what it assigned.
                state = .refunded
                reason = "REFUNDED"
            }
            if type == "REVOKE" { state = .revoked }
            if state == .expired, reason == nil { reason = renewal?.expirationIntent.map(Self.reason(intent:)) }
            var priceIncrease: String?
            if type == "PRICE_INCREASE" { priceIncrease = subtype }
            if let status = renewal?.priceIncreaseStatus, priceIncrease == nil, type != "DID_RENEW" {
                priceIncrease = status == .customerHasNotResponded ? "PENDING" : "ACCEPTED"
            }
            // Monthly billing with a 12-month commitment (API 1.21): only Apple's known plans, only sane numbers.
            let plan = transaction?.billingPlanType.flatMap { BillingPlanType.knownValues.contains($0) ? $0.rawValue : nil }
            var commitment = transaction?.commitmentInfo.flatMap {
                SubscriptionCommitment(
                    billingPeriodNumber: $0.billingPeriodNumber,
                    totalBillingPeriods: $0.totalBillingPeriods,
                    expires: $0.commitmentExpiresDate,
                    price: $0.commitmentPrice
                )
            }
            if plan != BillingPlanType.monthly.rawValue { commitment = nil }
            if let status = renewal?.commitmentInfo?.commitmentAutoRenewStatus { commitment?.renewsAfterCommitment = status == .on }
            snapshot = SubscriptionSnapshot(
                originalTransactionId: verified.originalTransactionId,
                bundleId: bundleId,
                productId: verified.productId,
                subscriptionGroup: verified.subscriptionGroup,
                environment: environment,
                state: state,
                expirationReason: reason,
                autoRenew: renewal?.autoRenewStatus.map { $0 == .on },
                autoRenewProductId: renewal?.autoRenewProductId,
                expiresAt: verified.expiresDate,
                gracePeriodExpiresAt: renewal?.gracePeriodExpiresDate,
                offerType: verified.offerType,
                offerId: transaction?.offerIdentifier,
                priceIncrease: priceIncrease,
                latestTransactionId: verified.transactionId,
                billingPlan: plan,
                commitment: commitment,
                event: subtype.map { "\(type)/\($0)" } ?? type,
                signedDate: signedDate
            )
        }
        return AppleMessage(
            id: id,
            format: "v2",
            type: type,
            subtype: subtype,
            effect: effect,
            bundleId: bundleId,
            environment: environment,
            signedDate: signedDate,
            transactions: verified.map { [$0] } ?? [],
            focus: verified,
            snapshot: snapshot,
            consumptionReason: consumptionReason
        )
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
    ) -> AppleMessage {
        let type = body.notificationType?.rawValue ?? "UNKNOWN"
        let entries = (response.latestReceiptInfo ?? []) + (response.receipt?.inApp ?? [])
        var message = legacy(
            id: id,
            type: type,
            effect: LifecycleRules.effect(v1: type),
            event: "V1 \(type)",
            environment: response.environment?.rawValue ?? "Production",
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
    static func v1Unconfirmed(id: String, body: ResponseBodyV1, bundleId: String, receivedAt: Date, reason: String) -> AppleMessage {
        let type = body.notificationType?.rawValue ?? "UNKNOWN"
        return AppleMessage(
            id: id,
            format: "v1",
            type: type,
            subtype: nil,
            effect: LifecycleEffect(recordOnly: reason),
            bundleId: bundleId,
            environment: body.environment == "PROD" ? "Production" : "Sandbox",
            signedDate: receivedAt,
            transactions: [],
            focus: nil,
            snapshot: nil,
            consumptionReason: nil
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
    ) -> AppleMessage {
        var message = legacy(
            id: "receipt:\(original):\(Int64(now.timeIntervalSince1970 * 1000))",
            type: "STATUS",
            effect: LifecycleEffect(deliver: true, updatesSubscription: true),
            event: "verifyReceipt",
            environment: response.environment?.rawValue ?? "Production",
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
        type: String,
        effect: LifecycleEffect,
        event: String,
        environment: String,
        entries: [LegacyTransaction],
        pending pendingInfo: [LegacyPendingRenewalInfo],
        original: String?,
        autoRenew: Bool?,
        autoRenewProductId: String?,
        bundleId: String,
        receivedAt: Date
    ) -> AppleMessage {
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
        if let focus, focus.expiresDate != nil, effect.updatesSubscription {
            let pending = pendingInfo.first { $0.originalTransactionId == focus.originalTransactionId }
            let grace = pending?.gracePeriodExpiresDateValue
            var state: SubscriptionState
            var reason: String?
            if focus.revocationDate != nil && type != "REVOKE" {
                state = .refunded
                reason = "REFUNDED"
            } else if type == "REVOKE" {
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
                event: event,
                signedDate: receivedAt
            )
        }
        return AppleMessage(
            id: id,
            format: "v1",
            type: type,
            subtype: nil,
            effect: effect,
            bundleId: bundleId,
            environment: environment,
            signedDate: receivedAt,
            transactions: transactions,
            cancelled: transactions.filter { $0.revocationDate != nil },
            focus: focus,
            snapshot: snapshot,
            consumptionReason: nil
        )
    }

    static func reason(intent: ExpirationIntent) -> String {
        switch intent {
        case .customerCancelled: "VOLUNTARY"
        case .billingError: "BILLING_RETRY"
        case .customerDidNotConsentToPriceIncrease: "PRICE_INCREASE"
        case .productNotAvailable: "PRODUCT_NOT_FOR_SALE"
        default: "OTHER"
        }
    }
}
