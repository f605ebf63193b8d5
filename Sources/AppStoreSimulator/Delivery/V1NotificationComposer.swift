import AppStoreWire
import Foundation

/// Turns a notification into the App Store Server Notifications V1 JSON body (reference §2) that an app set to V1
/// receives: the V1 type, auto-renew fields, the shared secret as `password`, and a `unified_receipt` issued
/// from the account's state at send time.
public struct V1NotificationComposer: Sendable {
    public let identity: ReceiptSigningIdentity
    public let sharedSecret: String?

    public init(identity: ReceiptSigningIdentity, sharedSecret: String?) {
        self.identity = identity
        self.sharedSecret = sharedSecret
    }

    /// The V1 type for a V2 notification, or nil when V1 has no such message.
    public static func v1Type(
        for notification: SimulatedNotification,
        transaction: JWSTransactionDecodedPayload?
    )
        -> NotificationTypeV1?
    {
        switch (notification.type, notification.subtype) {
        case (.subscribed, .initialBuy?): return .initialBuy
        case (.subscribed, _): return .interactiveRenewal
        case (.didRenew, .billingRecovery?): return .didRecover
        case (.didRenew, _): return .didRenew
        case (.didChangeRenewalPref, .upgrade?), (.offerRedeemed, .upgrade?): return .interactiveRenewal
        case (.didChangeRenewalPref, _), (.offerRedeemed, .downgrade?): return .didChangeRenewalPref
        case (.didChangeRenewalStatus, _): return .didChangeRenewalStatus
        case (.didFailToRenew, _): return .didFailToRenew
        case (.priceIncrease, .pending?): return .priceIncreaseConsent
        case (.consumptionRequest, _): return .consumptionRequest
        case (.revoke, _): return .revoke
        // AppleCare refunds of subscriptions were CANCEL; refunds of everything else REFUND.
        case (.refund, _): return transaction?.type == .autoRenewable ? .cancel : .refund
        default: return nil
        }
    }

    /// The JSON body, or nil when the notification has no V1 form.
    public func body(for notification: SimulatedNotification, store: SimulatedAppStore) async throws -> Data? {
        let transaction = try notification.payload.data?.signedTransactionInfo.map {
            try SignedDataVerifier.decodeUnverified($0, as: JWSTransactionDecodedPayload.self).payload
        }
        guard let type = Self.v1Type(for: notification, transaction: transaction),
            let transactionId = transaction?.transactionId, let account = await store.customer(of: transactionId)
        else { return nil }
        let renewal = try notification.payload.data?.signedRenewalInfo.map {
            try SignedDataVerifier.decodeUnverified($0, as: JWSRenewalInfoDecodedPayload.self).payload
        }
        let contents = try await store.receiptContents(account: account)
        let environment = store.environment
        let responses = VerifyReceiptResponseBuilder(environment: environment, requestDate: await store.currentDate)
        let latest = try await SimulatedDevice.receiptBuilder(for: account, store: store, identity: identity)
            .build(transactions: contents.transactions)
        let unified = UnifiedReceipt(
            environment: environment,
            latestReceipt: latest.base64,
            latestReceiptInfo: Array(responses.latestReceiptInfo(contents.transactions).prefix(100)),
            pendingRenewalInfo: contents.renewals.map(VerifyReceiptResponseBuilder.pendingRenewalInfo),
            status: 0
        )
        let body = ResponseBodyV1(
            notificationType: type,
            environment: environment == .production ? "PROD" : "Sandbox",
            bid: await store.catalog.bundleId,
            bvrs: "1",
            autoRenewStatus: renewal.map { $0.autoRenewStatus == .on ? "true" : "false" },
            autoRenewProductId: renewal?.autoRenewProductId,
            expirationIntent: renewal?.expirationIntent.map { Int64($0.rawValue) },
            originalTransactionId: transaction?.originalTransactionId,
            unifiedReceipt: unified
        )
        // The model never re-emits the shared secret; Apple's V1 body does carry it, so it is added here.
        var object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(body)) as? [String: Any] ?? [:]
        if let sharedSecret { object["password"] = sharedSecret }
        return try JSONSerialization.data(withJSONObject: object, options: .sortedKeys)
    }
}
