/// `purchases.products.get`: a one-time product purchase (`androidpublisher#productPurchase`). Its states are
/// integers, unlike the client's `Purchase.PurchaseState` and the raw `originalJson` (three encodings: see
/// ``PurchaseState``).
public struct ProductPurchase: Codable, Sendable, Hashable {
    public var kind: String?
    public var purchaseTimeMillis: PlayInt64?
    public var purchaseState: PurchaseState?
    public var consumptionState: ConsumptionState?
    public var acknowledgementState: ProductAcknowledgementState?
    public var developerPayload: String?
    /// `GPA.3312-…`: the key for money, refunds and voided purchases.
    public var orderId: String?
    public var purchaseToken: String?
    public var productId: String?
    /// Absent means 1.
    public var quantity: Int32?
    /// What is not refunded yet (quantity-based partial refunds lower it; a full refund makes it 0).
    public var refundableQuantity: Int32?
    public var obfuscatedExternalAccountId: String?
    public var obfuscatedExternalProfileId: String?
    public var regionCode: String?
    /// Set only for purchases outside the standard flow: test, promo code, rewarded.
    public var purchaseType: PurchaseType?

    public init(
        kind: String? = "androidpublisher#productPurchase",
        purchaseTimeMillis: PlayInt64? = nil,
        purchaseState: PurchaseState? = nil,
        consumptionState: ConsumptionState? = nil,
        acknowledgementState: ProductAcknowledgementState? = nil,
        developerPayload: String? = nil,
        orderId: String? = nil,
        purchaseToken: String? = nil,
        productId: String? = nil,
        quantity: Int32? = nil,
        refundableQuantity: Int32? = nil,
        obfuscatedExternalAccountId: String? = nil,
        obfuscatedExternalProfileId: String? = nil,
        regionCode: String? = nil,
        purchaseType: PurchaseType? = nil
    ) {
        self.kind = kind
        self.purchaseTimeMillis = purchaseTimeMillis
        self.purchaseState = purchaseState
        self.consumptionState = consumptionState
        self.acknowledgementState = acknowledgementState
        self.developerPayload = developerPayload
        self.orderId = orderId
        self.purchaseToken = purchaseToken
        self.productId = productId
        self.quantity = quantity
        self.refundableQuantity = refundableQuantity
        self.obfuscatedExternalAccountId = obfuscatedExternalAccountId
        self.obfuscatedExternalProfileId = obfuscatedExternalProfileId
        self.regionCode = regionCode
        self.purchaseType = purchaseType
    }

    /// The units bought (Google leaves `quantity` out for one).
    public var units: Int32 { max(1, quantity ?? 1) }

    /// A license tester's purchase: delivered, flagged, kept out of revenue.
    public var isTestPurchase: Bool { purchaseType == .test }
}

/// `ProductPurchase.purchaseState`: 0 purchased, 1 canceled, 2 pending.
public struct PurchaseState: PlayIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let purchased: Self = 0
    public static let canceled: Self = 1
    /// Slow payment methods: not to be granted, acknowledged or consumed until purchased.
    public static let pending: Self = 2

    public static let knownValues: [Self] = [.purchased, .canceled, .pending]
    public var name: String? { [0: "PURCHASED", 1: "CANCELED", 2: "PENDING"][rawValue] }
}

/// `ProductPurchase.consumptionState`: 0 yet to be consumed, 1 consumed.
public struct ConsumptionState: PlayIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let yetToBeConsumed: Self = 0
    public static let consumed: Self = 1

    public static let knownValues: [Self] = [.yetToBeConsumed, .consumed]
    public var name: String? { [0: "YET_TO_BE_CONSUMED", 1: "CONSUMED"][rawValue] }
}

/// `ProductPurchase.acknowledgementState`: 0 yet to be acknowledged, 1 acknowledged.
public struct ProductAcknowledgementState: PlayIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let yetToBeAcknowledged: Self = 0
    public static let acknowledged: Self = 1

    public static let knownValues: [Self] = [.yetToBeAcknowledged, .acknowledged]
    public var name: String? { [0: "YET_TO_BE_ACKNOWLEDGED", 1: "ACKNOWLEDGED"][rawValue] }
}

/// `ProductPurchase.purchaseType`: set only when not bought through the standard flow.
public struct PurchaseType: PlayIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// A license tester with a test payment method.
    public static let test: Self = 0
    public static let promo: Self = 1
    public static let rewarded: Self = 2

    public static let knownValues: [Self] = [.test, .promo, .rewarded]
    public var name: String? { [0: "TEST", 1: "PROMO", 2: "REWARDED"][rawValue] }
}
