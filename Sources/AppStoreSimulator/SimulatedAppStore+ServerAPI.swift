import AppStoreTestSigning
import AppStoreWire
import Foundation

/// What the App Store Server API answers from the simulator's state: history, statuses, orders, refunds,
/// consumption information, test notifications.
extension SimulatedAppStore {
    /// The account that owns a transaction id, original transaction id or app transaction id.
    public func customer(of anyTransactionId: String) -> String? {
        if let account = transactionAccount[anyTransactionId] { return account }
        return accounts.values.first { $0.appTransactionId == anyTransactionId }?.id
    }

    /// The account's transactions matching a history request, oldest first by modification (refunds and
    /// upgrades move a transaction to the end), without paging.
    public func transactionHistory(
        anyTransactionId: String,
        request: TransactionHistoryRequest = .init()
    ) throws
        -> [JWSTransactionDecodedPayload]
    {
        guard let account = customer(of: anyTransactionId) else { throw SimulatorError.unknownTransaction(anyTransactionId) }
        let ordered = modificationOrder.filter { transactionAccount[$0] == account && !finished.contains($0) }
        var result = ordered.compactMap { transactions[$0] }.filter { transaction in
            if let start = request.startDate, (transaction.purchaseDate ?? .distantPast) < start { return false }
            if let end = request.endDate, (transaction.purchaseDate ?? .distantFuture) >= end { return false }
            if !request.productIds.isEmpty, !request.productIds.contains(transaction.productId ?? "") { return false }
            if !request.productTypes.isEmpty {
                let kind: TransactionHistoryProductType? =
                    switch transaction.type {
                    case .autoRenewable: .autoRenewable
                    case .nonRenewing: .nonRenewable
                    case .consumable: .consumable
                    case .nonConsumable: .nonConsumable
                    default: nil
                    }
                guard let kind, request.productTypes.contains(kind) else { return false }
            }
            if !request.subscriptionGroupIdentifiers.isEmpty,
                !request.subscriptionGroupIdentifiers.contains(transaction.subscriptionGroupIdentifier ?? "")
            {
                return false
            }
            if let ownership = request.inAppOwnershipType, transaction.inAppOwnershipType != ownership { return false }
            if let revoked = request.revoked, (transaction.revocationDate != nil) != revoked { return false }
            return true
        }
        if request.sort == .descending { result.reverse() }
        return result
    }

    /// Get All Subscription Statuses for the customer owning `anyTransactionId`.
    public func subscriptionStatuses(anyTransactionId: String, statuses: [SubscriptionStatus] = []) throws -> StatusResponse {
        guard let account = customer(of: anyTransactionId) else { throw SimulatorError.unknownTransaction(anyTransactionId) }
        var groups: [String: [LastTransactionsItem]] = [:]
        for id in subscriptions.keys.sorted() {
            guard let subscription = subscriptions[id], subscription.accountId == account else { continue }
            let status = subscription.state.status
            if !statuses.isEmpty, !statuses.contains(status) { continue }
            groups[subscription.groupId, default: []].append(
                LastTransactionsItem(
                    status: status,
                    originalTransactionId: id,
                    signedTransactionInfo: try signedTransaction(subscription.latestTransactionId),
                    signedRenewalInfo: try signer.sign(renewalInfo(subscription))
                )
            )
        }
        return StatusResponse(
            environment: environment,
            bundleId: catalog.bundleId,
            appAppleId: catalog.appAppleId,
            data: groups.keys.sorted().map { SubscriptionGroupIdentifierItem(subscriptionGroupIdentifier: $0, lastTransactions: groups[$0]) }
        )
    }

    /// Look Up Order ID: the transactions on a customer's invoice.
    public func lookUpOrder(_ orderId: String) throws -> OrderLookupResponse {
        guard let ids = orders[orderId] else { return OrderLookupResponse(status: .invalid, signedTransactions: []) }
        return OrderLookupResponse(status: .valid, signedTransactions: try ids.map { try signedTransaction($0) })
    }

    /// The order id (invoice) of a transaction, as the customer's receipt email shows it.
    public func orderId(ofTransaction id: String) -> String? { orders.first { $0.value.contains(id) }?.key }

    /// Get Refund History: the customer's refunded and revoked transactions, oldest first.
    public func refundHistory(anyTransactionId: String) throws -> [JWSTransactionDecodedPayload] {
        try transactionHistory(anyTransactionId: anyTransactionId, request: .init(revoked: true))
    }

    /// Records what the developer sent in answer to a `CONSUMPTION_REQUEST` (v2 body).
    public func recordConsumptionInformation(transactionId: String, _ information: ConsumptionRequest) throws {
        guard transactions[transactionId] != nil else { throw SimulatorError.unknownTransaction(transactionId) }
        guard information.customerConsented else { throw SimulatorError.notAllowed("customerConsented must be true") }
        consumptionAnswers[transactionId] = information
    }

    /// What the developer answered to consumption requests, by transaction id.
    public func consumptionInformation(transactionId: String) -> ConsumptionRequest? { consumptionAnswers[transactionId] }

    /// Keeps an accepted Send Consumption Information body as received, dated now.
    public func logConsumptionAnswer(transactionId: String, endpoint: ConsumptionAnswer.Endpoint, body: Data) {
        consumptionLog.append(ConsumptionAnswer(transactionId: transactionId, endpoint: endpoint, body: body, receivedAt: now))
    }

    /// Every accepted Send Consumption Information request, oldest first.
    public func receivedConsumptionAnswers() -> [ConsumptionAnswer] { consumptionLog }

    /// Set App Account Token: later transactions of the subscription (and this one) carry `token`.
    public func setAppAccountToken(originalTransactionId: String, token: UUID) throws {
        guard var original = transactions[originalTransactionId], original.originalTransactionId == originalTransactionId
        else { throw SimulatorError.unknownTransaction(originalTransactionId) }
        original.appAccountToken = token.uuidString.lowercased()
        transactions[originalTransactionId] = original
        modified(originalTransactionId)
        if var subscription = subscriptions[originalTransactionId] {
            subscription.appAccountToken = token.uuidString.lowercased()
            subscriptions[originalTransactionId] = subscription
        }
    }

    /// The signed app transaction of the customer owning `anyTransactionId`.
    public func signedAppTransaction(anyTransactionId: String) throws -> String {
        guard let accountId = customer(of: anyTransactionId), let account = accounts[accountId] else {
            throw SimulatorError.unknownTransaction(anyTransactionId)
        }
        return try signer.sign(appTransaction(of: account))
    }

    /// Finish Transaction: a finished consumable leaves the receipt and transaction history v1.
    public func finishTransaction(_ id: String) throws {
        guard let transaction = transactions[id] else { throw SimulatorError.unknownTransaction(id) }
        if transaction.type == .consumable { finished.insert(id) }
    }

    /// The app finishes a transaction on the device (StoreKit's `Transaction.finish()`).
    public func finishOnDevice(_ id: String) throws {
        guard transactions[id] != nil else { throw SimulatorError.unknownTransaction(id) }
        finishedOnDevice.insert(id)
    }

    /// The device's unfinished queue (StoreKit's `Transaction.unfinished`): the account's transactions finished
    /// neither by the app nor, for consumables, by the server through Finish Transaction; oldest first. StoreKit
    /// hands these to the app again at every launch.
    public func unfinishedTransactions(account accountId: String) throws -> [JWSTransactionDecodedPayload] {
        guard accounts[accountId] != nil else { throw SimulatorError.unknownAccount(accountId) }
        return transactions(account: accountId).filter {
            let id = $0.transactionId ?? ""
            return !finished.contains(id) && !finishedOnDevice.contains(id)
        }
    }

    /// ``unfinishedTransactions(account:)``, each signed now.
    public func signedUnfinishedTransactions(account accountId: String) throws -> [String] {
        try unfinishedTransactions(account: accountId).compactMap(\.transactionId).map { try signedTransaction($0) }
    }

    /// Request a Test Notification: a `TEST` notification, returning its token. Refused, as Apple refuses it,
    /// when the app has no notification URL (no delivery target is configured).
    public func sendTestNotification() throws -> String {
        guard deliversNotifications else {
            throw SimulatorError.notAllowed("the app has no App Store Server Notifications URL configured")
        }
        let token = generator.uuid().uuidString.lowercased() + "_" + String(Int64(now.timeIntervalSince1970 * 1000))
        let payload = ResponseBodyV2DecodedPayload(
            notificationType: .test,
            notificationUUID: generator.uuid().uuidString.lowercased(),
            version: "2.0",
            signedDate: now,
            data: NotificationData(
                appAppleId: environment == .production ? catalog.appAppleId : nil,
                bundleId: catalog.bundleId,
                environment: environment
            )
        )
        let notification = SimulatedNotification(payload: payload, signedPayload: try signer.sign(payload))
        append(notification, transaction: nil)
        testNotifications[token] = notification.notificationUUID
        return token
    }

    /// Get Test Notification Status.
    public func testNotificationStatus(token: String) throws -> CheckTestNotificationResponse {
        guard let uuid = testNotifications[token], let notification = notifications.first(where: { $0.notificationUUID == uuid })
        else { throw SimulatorError.notAllowed("no test notification for token \(token)") }
        let attempts = deliveries[uuid]?.attempts ?? []
        return CheckTestNotificationResponse(
            signedPayload: notification.signedPayload,
            sendAttempts: attempts,
            firstSendAttemptResult: attempts.first?.sendAttemptResult
        )
    }

    /// The status of a mass extension request.
    public func massExtensionStatus(productId: String, requestIdentifier: String) -> MassExtensionStatus? {
        massExtensions[requestIdentifier].flatMap { $0.productId == productId ? $0 : nil }
    }

    /// Everything a receipt for this account holds now (finished consumables excepted), and its subscriptions'
    /// renewal infos: the inputs of a verifyReceipt answer.
    public func receiptContents(
        account accountId: String
    ) throws -> (transactions: [JWSTransactionDecodedPayload], renewals: [JWSRenewalInfoDecodedPayload]) {
        guard accounts[accountId] != nil else { throw SimulatorError.unknownAccount(accountId) }
        let owned = transactionOrder.filter { transactionAccount[$0] == accountId && !finished.contains($0) }.compactMap { transactions[$0] }
        let renewals = subscriptions.keys.sorted().compactMap { subscriptions[$0] }.filter { $0.accountId == accountId }.map(renewalInfo)
        return (owned, renewals)
    }
}
