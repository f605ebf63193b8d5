/// A real-time developer notification (the decoded `data` of a Pub/Sub push): which purchase changed, never its
/// state — the Play Developer API answers that. Exactly one of the five kinds is present; a notification with none
/// (a kind Google added later) is kept and ``content`` says so.
public struct DeveloperNotification: Codable, Sendable, Hashable {
    /// Larger payloads are refused before decoding (real ones are a few hundred bytes).
    public static let maximumSize = 64 * 1024

    public var version: String?
    public var packageName: String?
    public var eventTimeMillis: PlayInt64?
    public var subscriptionNotification: SubscriptionNotification?
    public var oneTimeProductNotification: OneTimeProductNotification?
    public var voidedPurchaseNotification: VoidedPurchaseNotification?
    public var testNotification: TestNotification?
    public var pendingRefundReviewNotification: PendingRefundReviewNotification?

    public init(
        version: String? = "1.0",
        packageName: String?,
        eventTimeMillis: PlayInt64?,
        subscriptionNotification: SubscriptionNotification? = nil,
        oneTimeProductNotification: OneTimeProductNotification? = nil,
        voidedPurchaseNotification: VoidedPurchaseNotification? = nil,
        testNotification: TestNotification? = nil,
        pendingRefundReviewNotification: PendingRefundReviewNotification? = nil
    ) {
        self.version = version
        self.packageName = packageName
        self.eventTimeMillis = eventTimeMillis
        self.subscriptionNotification = subscriptionNotification
        self.oneTimeProductNotification = oneTimeProductNotification
        self.voidedPurchaseNotification = voidedPurchaseNotification
        self.testNotification = testNotification
        self.pendingRefundReviewNotification = pendingRefundReviewNotification
    }

    /// What the notification is about.
    public enum Content: Sendable, Hashable {
        case subscription(SubscriptionNotification)
        case oneTimeProduct(OneTimeProductNotification)
        case voidedPurchase(VoidedPurchaseNotification)
        case test
        case pendingRefundReview(PendingRefundReviewNotification)
        /// None of the kinds Storekeeper knows (or more than one): recorded, not applied.
        case unknown
    }

    public var content: Content {
        let present = [
            subscriptionNotification != nil, oneTimeProductNotification != nil, voidedPurchaseNotification != nil,
            testNotification != nil, pendingRefundReviewNotification != nil,
        ].filter { $0 }.count
        guard present == 1 else { return .unknown }
        if let subscriptionNotification { return .subscription(subscriptionNotification) }
        if let oneTimeProductNotification { return .oneTimeProduct(oneTimeProductNotification) }
        if let voidedPurchaseNotification { return .voidedPurchase(voidedPurchaseNotification) }
        if let pendingRefundReviewNotification { return .pendingRefundReview(pendingRefundReviewNotification) }
        return .test
    }

    /// The purchase token the notification is about, if any.
    public var purchaseToken: String? {
        subscriptionNotification?.purchaseToken ?? oneTimeProductNotification?.purchaseToken ?? voidedPurchaseNotification?.purchaseToken
    }
}

public struct SubscriptionNotification: Codable, Sendable, Hashable {
    public var version: String?
    public var notificationType: SubscriptionNotificationType?
    public var purchaseToken: String?
    /// Deprecated by Google (read products from the purchase's line items); kept when sent.
    public var subscriptionId: String?

    public init(version: String? = "1.0", notificationType: SubscriptionNotificationType?, purchaseToken: String?, subscriptionId: String? = nil) {
        self.version = version
        self.notificationType = notificationType
        self.purchaseToken = purchaseToken
        self.subscriptionId = subscriptionId
    }
}

/// `SubscriptionNotification.notificationType`. Google adds numbers without notice: unknown ones are kept.
public struct SubscriptionNotificationType: PlayIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Recovered from account hold.
    public static let recovered: Self = 1
    public static let renewed: Self = 2
    /// Canceled, voluntarily or not (a user's cancel is sent when it is made).
    public static let canceled: Self = 3
    public static let purchased: Self = 4
    public static let onHold: Self = 5
    public static let inGracePeriod: Self = 6
    /// The user restored it before expiry (the cancel undone).
    public static let restarted: Self = 7
    /// Deprecated by Google.
    public static let priceChangeConfirmed: Self = 8
    public static let deferred: Self = 9
    public static let paused: Self = 10
    public static let pauseScheduleChanged: Self = 11
    /// Revoked before its expiry: access ends now.
    public static let revoked: Self = 12
    public static let expired: Self = 13
    public static let itemsChanged: Self = 17
    public static let cancellationScheduled: Self = 18
    public static let priceChangeUpdated: Self = 19
    public static let pendingPurchaseCanceled: Self = 20
    public static let priceStepUpConsentUpdated: Self = 22

    public static let knownValues: [Self] = [
        .recovered, .renewed, .canceled, .purchased, .onHold, .inGracePeriod, .restarted, .priceChangeConfirmed, .deferred,
        .paused, .pauseScheduleChanged, .revoked, .expired, .itemsChanged, .cancellationScheduled, .priceChangeUpdated,
        .pendingPurchaseCanceled, .priceStepUpConsentUpdated,
    ]

    public var name: String? { Self.names[rawValue] }

    static let names: [Int32: String] = [
        1: "SUBSCRIPTION_RECOVERED", 2: "SUBSCRIPTION_RENEWED", 3: "SUBSCRIPTION_CANCELED", 4: "SUBSCRIPTION_PURCHASED",
        5: "SUBSCRIPTION_ON_HOLD", 6: "SUBSCRIPTION_IN_GRACE_PERIOD", 7: "SUBSCRIPTION_RESTARTED",
        8: "SUBSCRIPTION_PRICE_CHANGE_CONFIRMED", 9: "SUBSCRIPTION_DEFERRED", 10: "SUBSCRIPTION_PAUSED",
        11: "SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED", 12: "SUBSCRIPTION_REVOKED", 13: "SUBSCRIPTION_EXPIRED",
        17: "SUBSCRIPTION_ITEMS_CHANGED", 18: "SUBSCRIPTION_CANCELLATION_SCHEDULED", 19: "SUBSCRIPTION_PRICE_CHANGE_UPDATED",
        20: "SUBSCRIPTION_PENDING_PURCHASE_CANCELED", 22: "SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED",
    ]
}

public struct OneTimeProductNotification: Codable, Sendable, Hashable {
    public var version: String?
    public var notificationType: OneTimeProductNotificationType?
    public var purchaseToken: String?
    /// The product id.
    public var sku: String?

    public init(version: String? = "1.0", notificationType: OneTimeProductNotificationType?, purchaseToken: String?, sku: String?) {
        self.version = version
        self.notificationType = notificationType
        self.purchaseToken = purchaseToken
        self.sku = sku
    }
}

public struct OneTimeProductNotificationType: PlayIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let purchased: Self = 1
    /// A pending purchase was canceled.
    public static let canceled: Self = 2

    public static let knownValues: [Self] = [.purchased, .canceled]
    public var name: String? { [1: "ONE_TIME_PRODUCT_PURCHASED", 2: "ONE_TIME_PRODUCT_CANCELED"][rawValue] }
}

public struct VoidedPurchaseNotification: Codable, Sendable, Hashable {
    public var purchaseToken: String?
    public var orderId: String?
    public var productType: VoidedProductType?
    public var refundType: RefundType?

    public init(purchaseToken: String?, orderId: String?, productType: VoidedProductType?, refundType: RefundType?) {
        self.purchaseToken = purchaseToken
        self.orderId = orderId
        self.productType = productType
        self.refundType = refundType
    }
}

public struct VoidedProductType: PlayIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let subscription: Self = 1
    public static let oneTime: Self = 2

    public static let knownValues: [Self] = [.subscription, .oneTime]
    public var name: String? { [1: "PRODUCT_TYPE_SUBSCRIPTION", 2: "PRODUCT_TYPE_ONE_TIME"][rawValue] }
}

public struct RefundType: PlayIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let fullRefund: Self = 1
    /// Some units of a multi-quantity purchase: `refundableQuantity` says how many are left.
    public static let quantityBasedPartialRefund: Self = 2

    public static let knownValues: [Self] = [.fullRefund, .quantityBasedPartialRefund]
    public var name: String? { [1: "REFUND_TYPE_FULL_REFUND", 2: "REFUND_TYPE_QUANTITY_BASED_PARTIAL_REFUND"][rawValue] }
}

/// From Play Console's "send test notification": nothing to apply.
public struct TestNotification: Codable, Sendable, Hashable {
    public var version: String?

    public init(version: String? = "1.0") { self.version = version }
}

/// A chargeback Google asks the developer to review (answer with `orders.reviewrefund` within 24 hours). Field names
/// from a third-party client; Google's page was not read.
public struct PendingRefundReviewNotification: Codable, Sendable, Hashable {
    public var version: String?
    public var pendingRefundToken: String?
    public var orderId: String?
    public var refundReason: Int32?
    public var obfuscatedAccountId: String?
    public var obfuscatedProfileId: String?
}
