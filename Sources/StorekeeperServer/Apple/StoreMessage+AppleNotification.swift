import AppStoreWire
import Foundation
import StorekeeperCore
import StorekeeperStorage

/// App Store Server Notifications V2 as ``StoreMessage``: the one table from Apple's `notificationType` and `subtype`
/// to the store-neutral kind, and Apple's signed transaction and renewal info to a subscription snapshot (shared with
/// the Server API's answers).
extension StoreMessage {
    /// Apple's V2 notification type and subtype as a kind. Every type and subtype Apple documents has an entry; an
    /// unknown type is recorded only, never guessed at.
    static func kind(_ type: NotificationTypeV2, _ subtype: Subtype?, of payload: ResponseBodyV2DecodedPayload? = nil) -> Kind {
        switch type {
        case .subscribed, .oneTimeCharge: .purchased
        case .didRenew: .renewed(recovered: subtype == .billingRecovery)
        // UPGRADE (and same-duration crossgrades) start a new transaction now; DOWNGRADE (and different-duration
        // crossgrades) only change the next renewal; none cancels a downgrade.
        case .didChangeRenewalPref: .planChanged(subtype == .upgrade ? .startsNow : .fromNextRenewal)
        case .offerRedeemed: .offerRedeemed(subtype == .upgrade ? .startsNow : .fromNextRenewal)
        case .didChangeRenewalStatus: .renewalStatusChanged
        case .didFailToRenew: .billingFailed(gracePeriod: subtype == .gracePeriod)
        case .gracePeriodExpired: .gracePeriodExpired
        case .expired: .expired
        case .priceIncrease: .priceChange
        case .refund: .refunded(subtype == .seats ? .seats : .purchase)
        case .refundDeclined: .refundDeclined
        case .refundReversed: .refundReversed
        case .revoke: .revoked
        case .consumptionRequest: .consumptionQuestion(reason: payload?.data?.consumptionRequestReason?.rawValue)
        case .renewalExtended: .renewalExtended
        case .renewalExtension where subtype == .failure: .renewalExtensionFailed
        case .renewalExtension: .informational("summary of a renewal date extension for all subscribers")
        case .unclaimSeats: .seatsReleased(seatClaimIds(payload?.unclaimInfo))
        case .rescindConsent: .consentRescinded(install: nil)
        case .priceChange, .metadataUpdate, .migration, "MIGRATE":
            .informational("Advanced Commerce API message; Storekeeper sells through StoreKit")
        case .externalPurchaseToken: .informational("external purchase token; reported outside the App Store")
        case .test: .informational("test notification")
        default: .informational("unknown notification type \(type.rawValue)")
        }
    }

    /// The V2 notifications the subscription analytics count: churn by reason, failed renewals, recoveries.
    static let appleLifecycleCounting = LifecycleCounting(
        types: [NotificationTypeV2.expired, .didFailToRenew, .didRenew].map(\.rawValue)
    ) { type, subtype in
        switch (NotificationTypeV2(rawValue: type), subtype.map(Subtype.init(rawValue:))) {
        case (.expired, .voluntary): .voluntaryChurn
        case (.expired, .billingRetry): .billingChurn
        case (.didFailToRenew, let subtype): .billingFailure(gracePeriod: subtype == .gracePeriod)
        case (.didRenew, .billingRecovery): .recovery
        default: nil
        }
    }

    /// The seat claims an `UNCLAIM_SEATS` names, bounded (a purchase has at most a few thousand seats; ids are UUIDs).
    static func seatClaimIds(_ info: UnclaimInfo?) -> [String] {
        Array((info?.unclaimSeatIds ?? []).filter { !$0.isEmpty && $0.utf8.count <= 100 }.prefix(10_000))
    }

    /// A verified V2 notification. `appTransactionId` is the id of `appData`'s verified app transaction (`RESCIND_CONSENT`).
    static func appleNotification(
        id: String,
        payload: ResponseBodyV2DecodedPayload,
        bundleId: String,
        environment: StoreEnvironment,
        receivedAt: Date,
        transaction: JWSTransactionDecodedPayload?,
        renewal: JWSRenewalInfoDecodedPayload?,
        appTransactionId: String?
    ) -> StoreMessage {
        let type = payload.notificationType
        var kind = kind(type, payload.subtype, of: payload)
        if case .consentRescinded = kind { kind = .consentRescinded(install: appTransactionId) }
        return apple(
            id: id,
            source: .notification,
            kind: kind,
            label: payload.subtype.map { "\(type.rawValue)/\($0.rawValue)" } ?? type.rawValue,
            bundleId: bundleId,
            environment: environment,
            signedDate: payload.signedDate ?? receivedAt,
            transaction: transaction,
            signedTransaction: payload.data?.signedTransactionInfo,
            renewal: renewal,
            status: payload.data?.status.map { Int($0.rawValue) },
            expirationReason: type == .expired ? payload.subtype?.rawValue : nil,
            priceConsent: type == .priceIncrease ? payload.subtype?.rawValue : nil
        )
    }

    /// Decodes an inbox row. Rows are stored only after their signatures were verified on arrival (rejected
    /// payloads are never pending), so the stored bytes are decoded here without verifying them again.
    static func decode(_ stored: NotificationInbox.Stored) throws -> StoreMessage {
        let received = stored.received
        guard received.format == "v2" else {
            // V1 is unsigned: only what verifyReceipt confirms is applied (see V1Confirmation).
            throw StorekeeperError(
                .internal,
                code: "unconfirmed_v1",
                message: "inbox format \(received.format) is applied only once Apple confirms it"
            )
        }
        struct Body: Decodable { var signedPayload: String }
        let body = try AppStoreJSON.decodePayload(Body.self, from: Array(received.body.utf8))
        let payload = try SignedDataVerifier.decodeUnverifiedPayload(body.signedPayload, as: ResponseBodyV2DecodedPayload.self)
        return appleNotification(
            id: received.id,
            payload: payload,
            bundleId: received.bundleId ?? payload.data?.bundleId ?? "",
            environment: StoreEnvironment(storeName: payload.claimedIdentity.environment?.rawValue ?? received.environment ?? "Production"),
            receivedAt: stored.receivedAt,
            transaction: try payload.data?.signedTransactionInfo.map {
                try SignedDataVerifier.decodeUnverifiedPayload($0, as: JWSTransactionDecodedPayload.self)
            },
            renewal: try payload.data?.signedRenewalInfo.map {
                try SignedDataVerifier.decodeUnverifiedPayload($0, as: JWSRenewalInfoDecodedPayload.self)
            },
            appTransactionId: try payload.appData?.signedAppTransactionInfo.flatMap {
                try SignedDataVerifier.decodeUnverifiedPayload($0, as: AppTransaction.self).appTransactionId
            }
        )
    }

    /// A message about one of Apple's signed transactions (with its renewal info and Apple's `status`, when known): a
    /// notification, a status from the Server API, or a revocation found in the history.
    static func apple(
        id: String,
        source: Source,
        kind: Kind,
        label: String,
        bundleId: String,
        environment: StoreEnvironment,
        signedDate: Date,
        transaction: JWSTransactionDecodedPayload?,
        signedTransaction: String?,
        renewal: JWSRenewalInfoDecodedPayload?,
        status: Int?,
        expirationReason: String? = nil,
        priceConsent: String? = nil
    ) -> StoreMessage {
        let verified = transaction.flatMap { VerifiedTransaction(payload: $0, signedData: signedTransaction) }
        var snapshot: SubscriptionSnapshot?
        if let verified, kind.updatesSubscription, transaction?.type == .autoRenewable || renewal != nil {
            snapshot = subscription(
                verified,
                kind: kind,
                label: label,
                bundleId: bundleId,
                environment: environment,
                signedDate: signedDate,
                transaction: transaction,
                renewal: renewal,
                status: status,
                expirationReason: expirationReason,
                priceConsent: priceConsent
            )
        }
        return StoreMessage(
            id: id,
            source: source,
            kind: kind,
            label: label,
            bundleId: bundleId,
            environment: environment,
            signedDate: signedDate,
            transactions: verified.map { [$0] } ?? [],
            focus: verified,
            snapshot: snapshot
        )
    }

    /// Apple's subscription state rules: `status` when Apple sent one, else what the kind implies, corrected for
    /// refunds and revocations.
    private static func subscription(
        _ verified: VerifiedTransaction,
        kind: Kind,
        label: String,
        bundleId: String,
        environment: StoreEnvironment,
        signedDate: Date,
        transaction: JWSTransactionDecodedPayload?,
        renewal: JWSRenewalInfoDecodedPayload?,
        status: Int?,
        expirationReason: String?,
        priceConsent: String?
    ) -> SubscriptionSnapshot {
        var state = status.flatMap(SubscriptionState.init(appleStatus:)) ?? kind.impliedState
        var reason: String?
        if kind == .expired { reason = expirationReason ?? renewal?.expirationIntent.map(Self.reason(intent:)) }
        if case .refunded = kind {
            // A refunded current period ends the subscription (Apple reports status 5, revoked); a refunded older
            // period leaves it as it is.
            if state == .expired || state == .revoked || state == nil { state = .refunded }
            reason = "REFUNDED"
        } else if state == .revoked, kind != .revoked, transaction?.revocationDate != nil,
            transaction?.revocationType != .familyRevoke, transaction?.revocationType != .assignmentRevoke,
            transaction?.inAppOwnershipType != .familyShared, transaction?.inAppOwnershipType != .assigned
        {
            // Status 5 after a refund (a status check, a later notification) is that refund, not a Family Sharing
            // revocation or an organization taking back what it assigned.
            state = .refunded
            reason = "REFUNDED"
        }
        if kind == .revoked { state = .revoked }
        if state == .expired, reason == nil { reason = renewal?.expirationIntent.map(Self.reason(intent:)) }
        var priceIncrease = priceConsent
        if let status = renewal?.priceIncreaseStatus, priceIncrease == nil, kind != .renewed(recovered: false),
            kind != .renewed(recovered: true)
        {
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
        return SubscriptionSnapshot(
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
            event: label,
            signedDate: signedDate
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
