import AppStoreWire
import Foundation

/// Builds the legacy `verifyReceipt` answer (protocol reference §1) for a receipt and the account's current
/// transactions, in Apple's wire form: every number and Boolean a string, every date an `x`/`x_ms`/`x_pst` triplet.
///
/// `latest_receipt`, `latest_receipt_info` and `pending_renewal_info` are included only when an auto-renewable
/// subscription is involved, as Apple does. A pure value: it reads only its arguments.
public struct VerifyReceiptResponseBuilder: Sendable {
    /// The environment the receipt was verified in (`Sandbox` or `Production`).
    public var environment: AppStoreEnvironment
    /// When the request was processed (`request_date`).
    public var requestDate: Date
    /// The request's `exclude-old-transactions`: keep only the latest transaction per original transaction
    /// (the latest renewal of each subscription) in `latest_receipt_info`.
    public var excludeOldTransactions: Bool

    public init(environment: AppStoreEnvironment, requestDate: Date, excludeOldTransactions: Bool = false) {
        self.environment = environment
        self.requestDate = requestDate
        self.excludeOldTransactions = excludeOldTransactions
    }

    // MARK: Response

    /// A `status` 0 response.
    ///
    /// - Parameters:
    ///   - receipt: the decoded receipt the client sent; it gives the `receipt` object and its `in_app` entries.
    ///   - transactions: the account's transactions for the app as they are now (renewals, refunds included);
    ///     they give `latest_receipt_info` and complete the `in_app` entries they match by transaction id.
    ///   - renewalInfos: the renewal state of each auto-renewable subscription, for `pending_renewal_info`.
    ///   - latestReceipt: base64 of a receipt holding the current transactions (see the overload that issues it).
    public func response(
        receipt: AppReceipt,
        transactions: [JWSTransactionDecodedPayload],
        renewalInfos: [JWSRenewalInfoDecodedPayload],
        latestReceipt: String?
    ) -> VerifyReceiptResponse {
        let subscribed =
            transactions.contains(where: Self.isAutoRenewable)
            || receipt.inAppPurchases.contains(where: Self.isAutoRenewable) || !renewalInfos.isEmpty
        return VerifyReceiptResponse(
            status: .valid,
            environment: environment,
            receipt: legacyReceipt(receipt, transactions: transactions),
            latestReceipt: subscribed ? latestReceipt : nil,
            latestReceiptInfo: subscribed ? latestReceiptInfo(transactions) : nil,
            pendingRenewalInfo: subscribed ? renewalInfos.map(Self.pendingRenewalInfo) : nil
        )
    }

    /// A `status` 0 response whose `latest_receipt` is issued by `latestReceiptBuilder` over `transactions`.
    public func response(
        receipt: AppReceipt,
        transactions: [JWSTransactionDecodedPayload],
        renewalInfos: [JWSRenewalInfoDecodedPayload],
        latestReceiptBuilder: AppReceiptBuilder
    ) throws -> VerifyReceiptResponse {
        response(
            receipt: receipt,
            transactions: transactions,
            renewalInfos: renewalInfos,
            latestReceipt: try latestReceiptBuilder.build(transactions: transactions).base64
        )
    }

    // MARK: Parts

    /// The `receipt` object: the receipt's fields, `request_date`, and an `in_app` entry per in-app purchase in
    /// receipt order, taken from the matching transaction when there is one (it knows the ownership type and any
    /// later refund), from the receipt entry otherwise.
    public func legacyReceipt(_ receipt: AppReceipt, transactions: [JWSTransactionDecodedPayload]) -> LegacyReceipt {
        var byId: [String: JWSTransactionDecodedPayload] = [:]
        for transaction in transactions {
            if let id = transaction.transactionId { byId[id] = transaction }
        }
        let created = receipt.creationDate.map(LegacyReceiptDate.init)
        let appPurchased = receipt.originalPurchaseDate.map(LegacyReceiptDate.init)
        let expires = receipt.expirationDate.map(LegacyReceiptDate.init)
        let requested = LegacyReceiptDate(requestDate)
        return LegacyReceipt(
            // Apple sends 0 for the app identifiers outside production.
            adamId: receipt.appItemId ?? 0,
            appItemId: receipt.appItemId ?? 0,
            applicationVersion: receipt.appVersion,
            bundleId: receipt.bundleId,
            downloadId: receipt.downloadId ?? 0,
            expirationDate: expires?.gmt,
            rawExpirationDateMs: expires?.milliseconds,
            expirationDatePst: expires?.pacific,
            inApp: receipt.inAppPurchases.map { purchase in
                if let id = purchase.transactionId, let transaction = byId[id] {
                    return Self.legacyTransaction(transaction, inLatestReceiptInfo: false)
                }
                return Self.legacyTransaction(purchase)
            },
            originalApplicationVersion: receipt.originalApplicationVersion,
            originalPurchaseDate: appPurchased?.gmt,
            rawOriginalPurchaseDateMs: appPurchased?.milliseconds,
            originalPurchaseDatePst: appPurchased?.pacific,
            receiptCreationDate: created?.gmt,
            rawReceiptCreationDateMs: created?.milliseconds,
            receiptCreationDatePst: created?.pacific,
            receiptType: receipt.receiptType,
            requestDate: requested.gmt,
            rawRequestDateMs: requested.milliseconds,
            requestDatePst: requested.pacific,
            versionExternalIdentifier: receipt.versionExternalIdentifier ?? 0
        )
    }

    /// `latest_receipt_info`: newest purchase first; with ``excludeOldTransactions`` only the newest transaction
    /// of each original transaction (one-time purchases are their own original, so they all stay).
    public func latestReceiptInfo(_ transactions: [JWSTransactionDecodedPayload]) -> [LegacyTransaction] {
        var sorted = transactions.sorted(by: Self.isNewer)
        if excludeOldTransactions {
            var seen: Set<String> = []
            sorted = sorted.filter { transaction in
                seen.insert(transaction.originalTransactionId ?? transaction.transactionId ?? "").inserted
            }
        }
        return sorted.map { Self.legacyTransaction($0, inLatestReceiptInfo: true) }
    }

    /// One `in_app` or `latest_receipt_info` entry for a signed transaction.
    ///
    /// `subscription_group_identifier`, `is_upgraded`, `offer_code_ref_name` and `app_account_token` are
    /// documented for `latest_receipt_info` only and are left out of `in_app` entries.
    public static func legacyTransaction(
        _ transaction: JWSTransactionDecodedPayload,
        inLatestReceiptInfo: Bool
    ) -> LegacyTransaction {
        let purchased = transaction.purchaseDate.map(LegacyReceiptDate.init)
        let originallyPurchased = transaction.originalPurchaseDate.map(LegacyReceiptDate.init)
        let expires = transaction.expiresDate.map(LegacyReceiptDate.init)
        let cancelled = transaction.revocationDate.map(LegacyReceiptDate.init)
        let introductory = transaction.offerType == .introductory
        let trial = introductory && transaction.offerDiscountType == .freeTrial
        return LegacyTransaction(
            quantity: String(transaction.quantity ?? 1),
            productId: transaction.productId,
            transactionId: transaction.transactionId,
            originalTransactionId: transaction.originalTransactionId,
            purchaseDate: purchased?.gmt,
            rawPurchaseDateMs: purchased?.milliseconds,
            purchaseDatePst: purchased?.pacific,
            originalPurchaseDate: originallyPurchased?.gmt,
            rawOriginalPurchaseDateMs: originallyPurchased?.milliseconds,
            originalPurchaseDatePst: originallyPurchased?.pacific,
            expiresDate: expires?.gmt,
            rawExpiresDateMs: expires?.milliseconds,
            expiresDatePst: expires?.pacific,
            cancellationDate: cancelled?.gmt,
            rawCancellationDateMs: cancelled?.milliseconds,
            cancellationDatePst: cancelled?.pacific,
            cancellationReason: cancelled == nil ? nil : transaction.revocationReason.map { String($0.rawValue) },
            isTrialPeriod: String(trial),
            // Apple documents this flag for auto-renewable subscriptions only.
            isInIntroOfferPeriod: isAutoRenewable(transaction) ? String(introductory && !trial) : nil,
            isUpgraded: inLatestReceiptInfo && transaction.isUpgraded == true ? "true" : nil,
            promotionalOfferId: transaction.offerType == .promotional ? transaction.offerIdentifier : nil,
            offerCodeRefName: inLatestReceiptInfo && transaction.offerType == .offerCode
                ? transaction.offerIdentifier : nil,
            webOrderLineItemId: transaction.webOrderLineItemId,
            subscriptionGroupIdentifier: inLatestReceiptInfo ? transaction.subscriptionGroupIdentifier : nil,
            inAppOwnershipType: transaction.inAppOwnershipType?.rawValue,
            appAccountToken: inLatestReceiptInfo ? transaction.appAccountToken : nil
        )
    }

    /// An `in_app` entry from a receipt's in-app purchase alone (no matching transaction is known).
    public static func legacyTransaction(_ purchase: AppReceiptInAppPurchase) -> LegacyTransaction {
        let purchased = purchase.purchaseDate.map(LegacyReceiptDate.init)
        let originallyPurchased = purchase.originalPurchaseDate.map(LegacyReceiptDate.init)
        let expires = purchase.expiresDate.map(LegacyReceiptDate.init)
        let cancelled = purchase.cancellationDate.map(LegacyReceiptDate.init)
        return LegacyTransaction(
            quantity: purchase.quantity.map { String($0) },
            productId: purchase.productId,
            transactionId: purchase.transactionId,
            originalTransactionId: purchase.originalTransactionId,
            purchaseDate: purchased?.gmt,
            rawPurchaseDateMs: purchased?.milliseconds,
            purchaseDatePst: purchased?.pacific,
            originalPurchaseDate: originallyPurchased?.gmt,
            rawOriginalPurchaseDateMs: originallyPurchased?.milliseconds,
            originalPurchaseDatePst: originallyPurchased?.pacific,
            expiresDate: expires?.gmt,
            rawExpiresDateMs: expires?.milliseconds,
            expiresDatePst: expires?.pacific,
            cancellationDate: cancelled?.gmt,
            rawCancellationDateMs: cancelled?.milliseconds,
            cancellationDatePst: cancelled?.pacific,
            isTrialPeriod: String(purchase.isTrialPeriod ?? false),
            isInIntroOfferPeriod: isAutoRenewable(purchase) ? String(purchase.isInIntroOfferPeriod ?? false) : nil,
            promotionalOfferId: purchase.promotionalOfferId,
            webOrderLineItemId: purchase.webOrderLineItemId.map { String($0) }
        )
    }

    /// One `pending_renewal_info` entry. The offer identifier becomes `promotional_offer_id` or
    /// `offer_code_ref_name` by offer type; `price_consent_status` mirrors `price_increase_status`.
    public static func pendingRenewalInfo(_ renewal: JWSRenewalInfoDecodedPayload) -> LegacyPendingRenewalInfo {
        let grace = renewal.gracePeriodExpiresDate.map(LegacyReceiptDate.init)
        let priceIncrease = renewal.priceIncreaseStatus.map { String($0.rawValue) }
        return LegacyPendingRenewalInfo(
            autoRenewProductId: renewal.autoRenewProductId,
            autoRenewStatus: renewal.autoRenewStatus.map { String($0.rawValue) },
            expirationIntent: renewal.expirationIntent.map { String($0.rawValue) },
            gracePeriodExpiresDate: grace?.gmt,
            rawGracePeriodExpiresDateMs: grace?.milliseconds,
            gracePeriodExpiresDatePst: grace?.pacific,
            isInBillingRetryPeriod: renewal.isInBillingRetryPeriod.map { $0 ? "1" : "0" },
            offerCodeRefName: renewal.offerType == .offerCode ? renewal.offerIdentifier : nil,
            originalTransactionId: renewal.originalTransactionId,
            priceConsentStatus: priceIncrease,
            priceIncreaseStatus: priceIncrease,
            productId: renewal.productId,
            promotionalOfferId: renewal.offerType == .promotional ? renewal.offerIdentifier : nil
        )
    }

    // MARK: Helpers

    private static func isAutoRenewable(_ transaction: JWSTransactionDecodedPayload) -> Bool {
        if let type = transaction.type { return type == .autoRenewable }
        return transaction.expiresDate != nil && transaction.webOrderLineItemId != nil
    }

    private static func isAutoRenewable(_ purchase: AppReceiptInAppPurchase) -> Bool {
        if let type = purchase.productType { return type == AppReceiptBuilder.productTypeNumber(.autoRenewable) }
        return purchase.expiresDate != nil && purchase.webOrderLineItemId != nil
    }

    /// Newest purchase first; ties (renewals never share a date, but imports might) by larger transaction id.
    private static func isNewer(_ a: JWSTransactionDecodedPayload, _ b: JWSTransactionDecodedPayload) -> Bool {
        let aDate = a.purchaseDate ?? .distantPast
        let bDate = b.purchaseDate ?? .distantPast
        if aDate != bDate { return aDate > bDate }
        let aId = a.transactionId ?? ""
        let bId = b.transactionId ?? ""
        if aId.count != bId.count { return aId.count > bId.count }  // numeric ids: longer is larger
        return aId > bId
    }
}
