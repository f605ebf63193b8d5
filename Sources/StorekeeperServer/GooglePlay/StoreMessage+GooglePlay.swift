import Foundation
import GooglePlayWire
import StorekeeperCore

/// What the Play Developer API answered for the purchase a real-time developer notification names: the notification
/// itself only says that something happened to a token, so its facts come from here.
enum PlayPurchaseResource: Sendable {
    /// `subscriptionsv2.get`, with the subscription the token belongs to (nil: a new one, or a chain not seen yet), and
    /// what Google charged for its latest order when asked (`orders.get`).
    case subscription(SubscriptionPurchaseV2, original: String?, price: PlayOrderPricing.Price? = nil)
    /// `products.get` for a one-time product, and its order's total when Google gave it (`orders.get`).
    case product(ProductPurchase, productId: String, consumable: Bool, price: PlayOrderPricing.Price? = nil)
    /// Nothing to ask (a test notification, a refund review).
    case none
}

extension StoreMessage {
    /// A real-time developer notification as a store message, its facts from `resource`. `voided` is the delivered
    /// transaction a voided-purchase notification takes back (nil: Storekeeper never delivered it).
    static func googlePlay(
        id: String,
        notification: DeveloperNotification,
        resource: PlayPurchaseResource,
        voided: VerifiedTransaction? = nil,
        receivedAt: Date
    ) -> StoreMessage {
        let eventTime = notification.eventTimeMillis?.date ?? receivedAt
        let packageName = notification.packageName ?? ""
        var message = StoreMessage(
            id: id,
            source: .notification,
            kind: .informational("not a notification Storekeeper acts on"),
            label: "PLAY_UNKNOWN",
            bundleId: packageName,
            environment: .production,
            signedDate: eventTime,
            transactions: [],
            focus: nil,
            snapshot: nil
        )
        switch notification.content {
        case .subscription(let note):
            let type = note.notificationType
            message.label = type?.name.map { "SUBSCRIPTION_\($0)" } ?? "SUBSCRIPTION_\(type?.rawValue ?? 0)"
            guard case .subscription(let purchase, let original, let price) = resource, let token = note.purchaseToken else {
                message.kind = .informational("Google Play did not describe the subscription")
                return message
            }
            message.environment = purchase.isTestPurchase ? .sandbox : .production
            let transaction = VerifiedTransaction(
                playSubscription: purchase,
                packageName: packageName,
                token: token,
                original: original,
                eventTime: eventTime
            )
            message.kind = kind(of: type, purchase: purchase)
            if purchase.canceledStateContext?.replacementCancellation != nil, type != .purchased {
                // A change of plan ended this token; the subscription goes on under the token that replaced it.
                message.kind = .informational("this purchase token was replaced by a newer one (a change of plan)")
                return message
            }
            guard var transaction else {
                if case .informational = message.kind {} else { message.kind = .informational("nothing paid yet (pending)") }
                return message
            }
            if type == .revoked { transaction.revocationDate = eventTime }
            // What the order charged, not the plan's list price: a prorated plan change, an introductory price.
            if transaction.commerce.offerDiscountType != "FREE_TRIAL" { PlayOrderPricing.apply(price, to: &transaction) }
            if message.kind.delivers { message.transactions = [transaction] }
            message.focus = transaction
            message.snapshot = snapshot(purchase, transaction: transaction, label: message.label, eventTime: eventTime)
        case .oneTimeProduct(let note):
            let type = note.notificationType
            message.label = type?.name ?? "ONE_TIME_PRODUCT_\(type?.rawValue ?? 0)"
            guard type == .purchased else {
                message.kind = .informational("a pending purchase was cancelled before it was paid")
                return message
            }
            guard case .product(let purchase, let productId, let consumable, let price) = resource, let token = note.purchaseToken,
                var transaction = VerifiedTransaction(
                    playProduct: purchase,
                    packageName: packageName,
                    productId: productId,
                    token: token,
                    consumable: consumable
                )
            else {
                message.kind = .informational("Google Play does not say the purchase is paid")
                return message
            }
            PlayOrderPricing.apply(price, to: &transaction)
            message.environment = transaction.environment
            message.kind = .purchased
            message.transactions = [transaction]
            message.focus = transaction
        case .voidedPurchase(let note):
            message.label = "VOIDED_PURCHASE"
            guard var transaction = voided else {
                message.kind = .informational("a purchase Storekeeper never delivered was voided")
                return message
            }
            message.environment = transaction.environment
            transaction.revocationDate = eventTime
            if note.refundType == .quantityBasedPartialRefund, case .product(let purchase, _, _, _) = resource,
                let refundable = purchase.refundableQuantity,
                purchase.units > 0, refundable >= 0, refundable < purchase.units
            {
                // Google says how many units are left refundable: the rest were refunded.
                let refunded = Int64(purchase.units - refundable)
                transaction.commerce.revocationType = "REFUND_PRORATED"
                transaction.commerce.revocationPercentage = Int(refunded * 100_000 / Int64(purchase.units))
            } else {
                transaction.commerce.revocationType = "REFUND_FULL"
            }
            message.kind = .refunded(.purchase)
            message.focus = transaction
        case .test:
            message.label = "TEST_NOTIFICATION"
            message.kind = .informational("Google Play's test notification")
        case .pendingRefundReview:
            message.label = "PENDING_REFUND_REVIEW"
            message.kind = .informational("a refund is under review; Google decides it, and a voided purchase follows if refunded")
        case .unknown:
            break
        }
        return message
    }

    /// The store-neutral kind of a subscription notification.
    static func kind(of type: SubscriptionNotificationType?, purchase: SubscriptionPurchaseV2) -> Kind {
        switch type {
        case .recovered?: .renewed(recovered: true)
        case .renewed?: .renewed(recovered: false)
        case .purchased?: purchase.linkedPurchaseToken == nil ? .purchased : .planChanged(.startsNow)
        case .canceled?, .restarted?: .renewalStatusChanged
        case .inGracePeriod?: .billingFailed(gracePeriod: true)
        case .onHold?: .billingFailed(gracePeriod: false)
        case .expired?, .pendingPurchaseCanceled?: .expired
        case .revoked?: .revoked
        case .deferred?: .renewalExtended
        case .priceChangeConfirmed?, .priceChangeUpdated?, .priceStepUpConsentUpdated?: .priceChange
        case .paused?, .pauseScheduleChanged?, .itemsChanged?, .cancellationScheduled?: .status
        default: .informational("a subscription notification Storekeeper does not know")
        }
    }

    /// An increase on its way, in Apple's words: `PENDING` while the subscriber has not accepted it, `ACCEPTED` once
    /// they have (or for an opt-out increase they were told of); nil for a decrease, and once charged or cancelled.
    static func priceIncrease(_ change: PriceChangeDetails?) -> String? {
        guard let change, change.priceChangeMode != "PRICE_DECREASE" else { return nil }
        switch change.priceChangeState {
        case "OUTSTANDING": return "PENDING"
        case "CONFIRMED": return "ACCEPTED"
        default: return nil
        }
    }

    /// The subscription's state as Google describes it now.
    static func snapshot(_ purchase: SubscriptionPurchaseV2, transaction: VerifiedTransaction, label: String, eventTime: Date) -> SubscriptionSnapshot
    {
        let item = purchase.lineItems?.first
        let state = StorekeeperCore.SubscriptionState(play: purchase.subscriptionState, expires: transaction.expiresDate, now: eventTime)
        var snapshot = SubscriptionSnapshot(
            originalTransactionId: transaction.originalTransactionId,
            bundleId: transaction.bundleId,
            productId: transaction.productId,
            environment: transaction.environment,
            state: state,
            expirationReason: purchase.subscriptionState == .expired ? expirationReason(purchase) : nil,
            autoRenew: item?.autoRenewingPlan?.autoRenewEnabled,
            autoRenewProductId: item?.deferredItemReplacement?.productId ?? transaction.productId,
            expiresAt: transaction.expiresDate,
            gracePeriodExpiresAt: state == .gracePeriod ? transaction.expiresDate : nil,
            offerType: transaction.offerType,
            offerId: transaction.commerce.offerId,
            priceIncrease: priceIncrease(item?.autoRenewingPlan?.priceChangeDetails),
            latestTransactionId: transaction.transactionId,
            event: label,
            signedDate: eventTime
        )
        snapshot.store = .googlePlay
        return snapshot
    }

    private static func expirationReason(_ purchase: SubscriptionPurchaseV2) -> String {
        guard let canceled = purchase.canceledStateContext else { return "BILLING_ERROR" }
        if canceled.replacementCancellation != nil { return "UPGRADED" }
        if canceled.developerInitiatedCancellation != nil { return "DEVELOPER" }
        if canceled.systemInitiatedCancellation != nil { return "BILLING_ERROR" }
        return "VOLUNTARY"
    }
}

extension StoreMessage.Kind {
    /// Whether a message of this kind delivers its transactions (the planner decides the same way).
    fileprivate var delivers: Bool {
        switch self {
        case .purchased, .renewed, .status, .renewalExtended, .revoked: true
        case .planChanged(let change): change == .startsNow
        default: false
        }
    }
}
