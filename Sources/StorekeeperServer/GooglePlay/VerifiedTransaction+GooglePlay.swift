import Crypto
import Foundation
import GooglePlayWire
import StorekeeperCore

/// Google Play's purchases as ``VerifiedTransaction``s: only what the Play Developer API answered for a purchase
/// token is trusted (the client's `originalJson` is a hint at most).
extension VerifiedTransaction {
    /// Google refunds and revokes a purchase nobody acknowledged within this long of its purchase.
    static let playAcknowledgementWindow: TimeInterval = 3 * 86_400

    /// The transaction id of a Play order: the order id, or for a purchase without one, `token:` and a digest of its
    /// token. Never digits alone, so it cannot meet an App Store transaction id.
    static func playTransactionId(orderId: String?, token: String) -> String {
        if let orderId, !orderId.isEmpty, orderId.utf8.count <= 100,
            orderId.utf8.contains(where: { !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        {
            return orderId
        }
        return "token:" + SHA256.hash(data: Data(token.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// The order id a renewal's order id continues (`GPA.1-2-3..4` → `GPA.1-2-3`): a subscription's first order.
    static func playFirstOrderId(_ orderId: String) -> String {
        guard let range = orderId.range(of: "..") else { return orderId }
        return String(orderId[..<range.lowerBound])
    }

    /// The user the app named when it launched the billing flow (`setObfuscatedAccountId`): Storekeeper hands out an
    /// order's app account token for it.
    static func playAccountToken(_ obfuscated: String?) -> UUID? {
        guard let obfuscated, obfuscated.utf8.count == 36 else { return nil }
        return UUID(uuidString: obfuscated)
    }

    /// A one-time product's purchase; nil when Google does not say it is paid (pending, cancelled) or lacks its time.
    init?(
        playProduct purchase: ProductPurchase,
        packageName: String,
        productId: String,
        token: String,
        consumable: Bool
    ) {
        guard purchase.purchaseState == .purchased, let time = purchase.purchaseTimeMillis?.date else { return nil }
        let id = Self.playTransactionId(orderId: purchase.orderId, token: token)
        self.init(
            transactionId: id,
            originalTransactionId: id,
            bundleId: packageName,
            productId: productId,
            environment: purchase.isTestPurchase ? .sandbox : .production,
            purchaseDate: time,
            quantity: Int(purchase.units),
            appAccountToken: Self.playAccountToken(purchase.obfuscatedExternalAccountId),
            source: .storeAPI
        )
        store = .googlePlay
        purchaseToken = token
        commerce.transactionReason = "PURCHASE"
        // Redeemed with a promo code: an offer code, in Apple's words (free; orders.get prices it at nothing).
        if purchase.purchaseType == .promo { offerType = .code }
        let acknowledged = purchase.acknowledgementState == .acknowledged
        let consumed = purchase.consumptionState == .consumed
        if consumable ? !consumed : !acknowledged {
            acknowledgement = StoreAcknowledgement(
                action: consumable ? .consume : .acknowledge,
                deadline: time.addingTimeInterval(Self.playAcknowledgementWindow)
            )
        }
    }

    /// The latest paid period of a subscription purchase (its first order, or the renewal Google charged last), as one
    /// transaction of the subscription `original`; nil when nothing was paid yet (pending) or Google left out what
    /// delivery needs. `eventTime` dates a renewal (Google gives no order time); the first order is dated by its start.
    init?(
        playSubscription purchase: SubscriptionPurchaseV2,
        packageName: String,
        token: String,
        original: String?,
        eventTime: Date
    ) {
        guard let item = purchase.lineItems?.first, let productId = item.productId, let start = purchase.startTime,
            let expires = item.expiryTime
        else { return nil }
        guard purchase.subscriptionState != .pending, purchase.subscriptionState != .pendingPurchaseCanceled else { return nil }
        let orderId = item.latestSuccessfulOrderId ?? purchase.latestOrderId
        let id = Self.playTransactionId(orderId: orderId, token: token)
        let isFirstOrder = orderId.map { !$0.contains("..") } ?? true
        self.init(
            transactionId: id,
            originalTransactionId: original ?? Self.playFirstOrderId(id),
            bundleId: packageName,
            productId: productId,
            environment: purchase.isTestPurchase ? .sandbox : .production,
            purchaseDate: isFirstOrder ? start : min(eventTime, expires),
            expiresDate: expires,
            appAccountToken: Self.playAccountToken(purchase.externalAccountIdentifiers?.obfuscatedExternalAccountId),
            source: .storeAPI
        )
        store = .googlePlay
        purchaseToken = token
        commerce.transactionReason = isFirstOrder ? "PURCHASE" : "RENEWAL"
        commerce.offerId = item.offerDetails?.offerId
        if let price = item.autoRenewingPlan?.recurringPrice {
            commerce.price = price.milliunits
            commerce.currency = price.currencyCode
        }
        if item.offerPhase?.freeTrial != nil {
            offerType = .introductory
            commerce.offerDiscountType = "FREE_TRIAL"
            commerce.price = 0
        } else if item.offerPhase?.introductoryPrice != nil {
            offerType = .introductory
            commerce.offerDiscountType = "PAY_AS_YOU_GO"
        }
        // A promo code redeemed at signup is an offer code, in Apple's words, for the period it paid for.
        if isFirstOrder, let promotion = item.signupPromotion {
            offerType = .code
            commerce.offerId = promotion.vanityCode?.promotionCode ?? commerce.offerId
        }
        // Renewals need no acknowledgement; the purchase (and each new token of a change of plan) does.
        if isFirstOrder, purchase.acknowledgementState != .acknowledged {
            acknowledgement = StoreAcknowledgement(action: .acknowledge, deadline: start.addingTimeInterval(Self.playAcknowledgementWindow))
        }
    }
}

extension StorekeeperCore.SubscriptionState {
    /// Where a Play subscription stands; nil before it is paid (pending).
    init?(play state: GooglePlayWire.SubscriptionState?, expires: Date?, now: Date) {
        switch state {
        case .active?: self = .active
        case .inGracePeriod?: self = .gracePeriod
        case .onHold?: self = .billingRetry
        case .paused?: self = .paused
        case .canceled?: self = (expires.map { $0 > now } ?? false) ? .active : .expired
        case .expired?: self = .expired
        default: return nil
        }
    }
}
