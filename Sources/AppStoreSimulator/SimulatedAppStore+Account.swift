import AppStoreTestSigning
import AppStoreWire
import Foundation

/// Ask to Buy, price increases and renewal-date extensions.
extension SimulatedAppStore {
    // MARK: Ask to Buy

    /// A child's purchase that waits for the family organizer (StoreKit's `.pending` result); returns its request id.
    public func requestAskToBuy(
        productId: String,
        account accountId: String,
        options: PurchaseOptions = .init()
    ) throws
        -> String
    {
        guard catalog.product(productId) != nil else { throw SimulatorError.unknownProduct(productId) }
        guard accounts[accountId] != nil else { throw SimulatorError.unknownAccount(accountId) }
        let id = "ask-\(generator.uuid().uuidString.prefix(8).lowercased())"
        pendingAskToBuy[id] = (productId, accountId, options)
        return id
    }

    /// The organizer approves: the purchase happens now, as if the child had just bought it.
    public func approveAskToBuy(_ requestId: String) throws -> SimulatedPurchase {
        guard let request = pendingAskToBuy.removeValue(forKey: requestId) else {
            throw SimulatorError.notAllowed("no pending Ask to Buy request \(requestId)")
        }
        return try purchase(productId: request.productId, account: request.accountId, options: request.options)
    }

    /// The organizer declines: nothing is bought and Apple sends nothing.
    public func declineAskToBuy(_ requestId: String) throws {
        guard pendingAskToBuy.removeValue(forKey: requestId) != nil else {
            throw SimulatorError.notAllowed("no pending Ask to Buy request \(requestId)")
        }
    }

    // MARK: Price increases

    /// Raises a subscription's price. Subscribers hear `PRICE_INCREASE` / `PENDING` when consent is required (and
    /// lapse at renewal without it), or `PRICE_INCREASE` / `ACCEPTED` when it is not.
    public func raisePrice(productId: String, to price: Int64, requiresConsent: Bool) throws {
        guard let index = catalog.products.firstIndex(where: { $0.id == productId }),
            catalog.products[index].kind == .autoRenewable
        else { throw SimulatorError.unknownProduct(productId) }
        catalog.products[index].price = price
        for id in subscriptions.keys.sorted() {
            guard var subscription = subscriptions[id], subscription.sharedFrom == nil,
                subscription.autoRenewProductId == productId, subscription.state != .expired, subscription.state != .revoked,
                let latest = transactions[subscription.latestTransactionId]
            else { continue }
            subscription.priceIncreasePending = requiresConsent
            subscription.priceIncreaseAccepted = !requiresConsent
            subscriptions[id] = subscription
            try notify(
                .priceIncrease,
                requiresConsent ? .pending : .accepted,
                transaction: latest,
                renewal: renewalInfo(subscription),
                status: subscription.state.status
            )
        }
    }

    /// The customer agrees to a pending price increase: `PRICE_INCREASE` / `ACCEPTED`.
    public func consentToPriceIncrease(originalTransactionId: String) throws {
        guard var subscription = subscriptions[originalTransactionId], subscription.priceIncreasePending,
            let latest = transactions[subscription.latestTransactionId]
        else { throw SimulatorError.notAllowed("no pending price increase for \(originalTransactionId)") }
        subscription.priceIncreasePending = false
        subscription.priceIncreaseAccepted = true
        subscriptions[originalTransactionId] = subscription
        try notify(.priceIncrease, .accepted, transaction: latest, renewal: renewalInfo(subscription), status: subscription.state.status)
    }

    // MARK: Renewal-date extensions

    /// The outcome of one extension request, in the shape of Apple's ExtendRenewalDateResponse.
    public struct ExtensionResult: Sendable, Hashable {
        public let originalTransactionId: String
        public let webOrderLineItemId: String?
        public let success: Bool
        public let effectiveDate: Date?
    }

    /// Extends one subscription's renewal date (Apple's rules: 1–90 days, active with a paid period, not in a
    /// free offer or billing retry, at most two per 365 days): `RENEWAL_EXTENDED`.
    public func extendRenewalDate(originalTransactionId: String, days: Int) throws -> ExtensionResult {
        guard var subscription = subscriptions[originalTransactionId], var latest = transactions[subscription.latestTransactionId]
        else { throw SimulatorError.unknownTransaction(originalTransactionId) }
        guard (1...90).contains(days) else { throw SimulatorError.notAllowed("extendByDays must be 1–90") }
        guard isExtendable(subscription, latest: latest) else {
            return ExtensionResult(
                originalTransactionId: originalTransactionId,
                webOrderLineItemId: latest.webOrderLineItemId,
                success: false,
                effectiveDate: nil
            )
        }
        let expires = subscription.expiresDate + scaled(Double(days) * 86_400)
        subscription.expiresDate = expires
        // The renewal date moved: later renewals count from it.
        subscription.billingAnchor = nil
        subscription.extensions.append(now)
        subscriptions[originalTransactionId] = subscription
        latest.expiresDate = expires
        transactions[subscription.latestTransactionId] = latest
        modified(subscription.latestTransactionId)
        try notify(.renewalExtended, nil, transaction: latest, renewal: renewalInfo(subscription), status: .active)
        try mirrorToFamily(subscription)
        return ExtensionResult(
            originalTransactionId: originalTransactionId,
            webOrderLineItemId: latest.webOrderLineItemId,
            success: true,
            effectiveDate: expires
        )
    }

    func isExtendable(_ subscription: SubscriptionRecord, latest: JWSTransactionDecodedPayload) -> Bool {
        let recent = subscription.extensions.filter { now.timeIntervalSince($0) < 365 * 86_400 }
        let paidPeriods = transactions.values.filter {
            $0.originalTransactionId == subscription.originalTransactionId && ($0.price ?? 0) > 0
        }
        return subscription.state == .active && subscription.sharedFrom == nil && recent.count < 2 && !paidPeriods.isEmpty
            && latest.offerDiscountType != .freeTrial
    }

    /// Mass extension for every subscriber of a product (optionally only some storefronts): each failure is a
    /// `RENEWAL_EXTENSION` / `FAILURE`, and the end a `RENEWAL_EXTENSION` / `SUMMARY`. Reusing a request id
    /// changes nothing.
    public func extendRenewalDateForAll(
        productId: String,
        days: Int,
        requestIdentifier: String,
        storefrontCountryCodes: [String]? = nil
    ) throws -> MassExtensionStatus {
        if let done = massExtensions[requestIdentifier] { return done }
        guard catalog.product(productId)?.kind == .autoRenewable else { throw SimulatorError.unknownProduct(productId) }
        var succeeded: Int64 = 0
        var failed: Int64 = 0
        for id in subscriptions.keys.sorted() {
            guard let subscription = subscriptions[id], subscription.sharedFrom == nil, subscription.productId == productId,
                let latest = transactions[subscription.latestTransactionId], let account = accounts[subscription.accountId]
            else { continue }
            if let codes = storefrontCountryCodes, !codes.contains(account.storefront) { continue }
            guard subscription.state == .active else { continue }
            if isExtendable(subscription, latest: latest) {
                var extended = subscription
                extended.expiresDate += scaled(Double(days) * 86_400)
                extended.billingAnchor = nil
                extended.extensions.append(now)
                subscriptions[id] = extended
                var transaction = latest
                transaction.expiresDate = extended.expiresDate
                transactions[extended.latestTransactionId] = transaction
                modified(extended.latestTransactionId)
                try mirrorToFamily(extended)
                succeeded += 1
            } else {
                failed += 1
                try notify(.renewalExtension, .failure, transaction: latest, renewal: renewalInfo(subscription), status: subscription.state.status)
            }
        }
        let status = MassExtensionStatus(
            requestIdentifier: requestIdentifier,
            productId: productId,
            complete: true,
            completeDate: now,
            succeededCount: succeeded,
            failedCount: failed
        )
        massExtensions[requestIdentifier] = status
        try notifySummary(status, storefrontCountryCodes: storefrontCountryCodes)
        return status
    }

    func notifySummary(_ status: MassExtensionStatus, storefrontCountryCodes: [String]?) throws {
        let payload = ResponseBodyV2DecodedPayload(
            notificationType: .renewalExtension,
            subtype: .summary,
            notificationUUID: generator.uuid().uuidString.lowercased(),
            version: "2.0",
            signedDate: now,
            summary: NotificationSummary(
                requestIdentifier: status.requestIdentifier,
                environment: environment,
                appAppleId: environment == .production ? catalog.appAppleId : nil,
                bundleId: catalog.bundleId,
                productId: status.productId,
                storefrontCountryCodes: storefrontCountryCodes ?? catalog.storefronts.map(\.code),
                failedCount: status.failedCount,
                succeededCount: status.succeededCount
            )
        )
        append(SimulatedNotification(payload: payload, signedPayload: try signer.sign(payload)), transaction: nil)
    }
}

/// The state of a mass renewal-date extension, as Get Status of Subscription Renewal Date Extensions reports it.
public struct MassExtensionStatus: Sendable, Hashable {
    public let requestIdentifier: String
    public let productId: String
    public let complete: Bool
    public let completeDate: Date?
    public let succeededCount: Int64
    public let failedCount: Int64
}

extension SimulatedAppStore {
    /// Sets Apple's sandbox renewal cap (12 renewals), or removes it with `nil`.
    public func setRenewalLimit(_ limit: Int?) { renewalLimit = limit }

    /// Rehearses April 2026's version 2 of Send Consumption Information, which refused non-renewing subscriptions.
    public func setConsumptionV2RefusesNonRenewing(_ refuses: Bool) { consumptionV2RefusesNonRenewing = refuses }
}
