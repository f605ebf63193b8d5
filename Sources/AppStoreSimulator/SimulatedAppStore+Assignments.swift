import AppStoreWire
import Foundation

/// Volume purchasing through Apple Business and School Manager (API 1.22): an organization buys and assigns a purchase
/// to a customer, who gets an `ASSIGNED` transaction of their own — theirs to use, the organization's to take back
/// (`REVOKE` with revocation type `ASSIGNMENT_REVOKE`), and not the customer's sale. An assigned subscription renews
/// on the organization's account; its renewals stay assigned.
extension SimulatedAppStore {
    /// Assigns `productId` (non-consumable, non-renewing or auto-renewable) to `accountId`: `ONE_TIME_CHARGE`, or
    /// `SUBSCRIBED` / `INITIAL_BUY` for a subscription.
    @discardableResult
    public func assign(productId: String, to accountId: String, appAccountToken: UUID? = nil) throws -> SimulatedPurchase {
        try assign(productId: productId, to: accountId, appAccountToken: appAccountToken, group: nil)
    }

    /// Assigns as above; a member's copy of an APPLE-hosted group subscription (`group`) runs in the purchaser's period.
    func assign(
        productId: String,
        to accountId: String,
        appAccountToken: UUID?,
        group: SubscriptionRecord?
    ) throws -> SimulatedPurchase {
        guard let product = catalog.product(productId) else { throw SimulatorError.unknownProduct(productId) }
        guard let account = accounts[accountId] else { throw SimulatorError.unknownAccount(accountId) }
        guard product.kind != .consumable else { throw SimulatorError.notAllowed("consumables are not assigned") }
        let holds = transactions.values.contains {
            $0.productId == productId && transactionAccount[$0.transactionId ?? ""] == accountId && $0.revocationDate == nil
                && ($0.expiresDate.map { $0 > now } ?? true)
        }
        guard !holds else { throw SimulatorError.notAllowed("\(accountId) already has \(productId)") }
        let id = newTransactionId()
        let expires = product.kind == .autoRenewable ? (group?.expiresDate ?? advance(product.period!, from: now)) : nil
        var transaction = makeTransaction(
            id: id,
            originalId: id,
            product: product,
            account: account,
            purchaseDate: now,
            originalPurchaseDate: now,
            expiresDate: expires,
            reason: .purchase,
            token: appAccountToken?.uuidString.lowercased(),
            price: product.price
        )
        transaction.inAppOwnershipType = .assigned
        let purchase = try record(transaction, account: accountId)
        guard product.kind == .autoRenewable, let expires, let groupId = product.groupId else {
            try notify(.oneTimeCharge, nil, transaction: transaction, renewal: nil, status: nil)
            return purchase
        }
        var subscription = SubscriptionRecord(
            originalTransactionId: id,
            accountId: accountId,
            groupId: groupId,
            productId: product.id,
            autoRenewProductId: product.id,
            autoRenew: true,
            state: .active,
            expiresDate: expires,
            latestTransactionId: id,
            appAccountToken: transaction.appAccountToken,
            expirationIntent: nil,
            billingRetryStart: nil,
            nextBillingCheck: nil,
            graceExpires: nil,
            renewals: 0,
            discountedPeriodsLeft: 0,
            offer: nil,
            offerType: nil,
            recentStart: now
        )
        subscription.billingAnchor = group.map { $0.billingAnchor } ?? billingAnchor(product.period!, from: now)
        subscription.groupPurchase = group?.originalTransactionId
        subscriptions[id] = subscription
        try notify(.subscribed, .initialBuy, transaction: transaction, renewal: renewalInfo(subscription), status: .active)
        return purchase
    }

    /// The organization takes an assigned purchase back (`REVOKE`, `ASSIGNMENT_REVOKE`); for a subscription, its
    /// current period, and it stops renewing.
    public func revokeAssignment(transactionId: String) throws {
        guard let given = transactions[transactionId] else { throw SimulatorError.unknownTransaction(transactionId) }
        guard given.inAppOwnershipType == .assigned else { throw SimulatorError.notAllowed("\(transactionId) was not assigned") }
        let originalId = given.originalTransactionId ?? transactionId
        let id = subscriptions[originalId]?.latestTransactionId ?? transactionId
        guard var transaction = transactions[id], transaction.revocationDate == nil else {
            throw SimulatorError.notAllowed("\(transactionId) is already revoked")
        }
        transaction.revocationDate = now
        transaction.revocationType = .assignmentRevoke
        transaction.revocationReason = .otherReason
        transactions[id] = transaction
        modified(id)
        var status: SubscriptionStatus?
        var renewal: JWSRenewalInfoDecodedPayload?
        if var subscription = subscriptions[originalId] {
            subscription.state = .revoked
            subscription.autoRenew = false
            subscriptions[originalId] = subscription
            status = .revoked
            renewal = renewalInfo(subscription)
        }
        try notify(.revoke, nil, transaction: transaction, renewal: renewal, status: status)
    }
}
