import Foundation

/// `purchases.productsv2.getproductpurchasev2` (`androidpublisher#productPurchaseV2`): a one-time purchase with its
/// line items, looked up by token alone. There is no v2 acknowledge or consume: the v1 methods take the line item's
/// product id.
public struct ProductPurchaseV2: Codable, Sendable, Hashable {
    public var kind: String?
    public var productLineItem: [ProductLineItem]?
    public var purchaseStateContext: PurchaseStateContext?
    /// Present only for test purchases.
    public var testPurchaseContext: TestPurchaseContext?
    public var orderId: String?
    /// When it became purchased; absent while pending.
    public var purchaseCompletionTime: Date?
    public var acknowledgementState: AcknowledgementState?
    public var obfuscatedExternalAccountId: String?
    public var obfuscatedExternalProfileId: String?
    public var regionCode: String?

    public init(
        kind: String? = "androidpublisher#productPurchaseV2",
        productLineItem: [ProductLineItem]? = nil,
        purchaseStateContext: PurchaseStateContext? = nil,
        testPurchaseContext: TestPurchaseContext? = nil,
        orderId: String? = nil,
        purchaseCompletionTime: Date? = nil,
        acknowledgementState: AcknowledgementState? = nil,
        obfuscatedExternalAccountId: String? = nil,
        obfuscatedExternalProfileId: String? = nil,
        regionCode: String? = nil
    ) {
        self.kind = kind
        self.productLineItem = productLineItem
        self.purchaseStateContext = purchaseStateContext
        self.testPurchaseContext = testPurchaseContext
        self.orderId = orderId
        self.purchaseCompletionTime = purchaseCompletionTime
        self.acknowledgementState = acknowledgementState
        self.obfuscatedExternalAccountId = obfuscatedExternalAccountId
        self.obfuscatedExternalProfileId = obfuscatedExternalProfileId
        self.regionCode = regionCode
    }

    public struct ProductLineItem: Codable, Sendable, Hashable {
        public var productId: String?
        public var productOfferDetails: ProductOfferDetails?

        public init(productId: String?, productOfferDetails: ProductOfferDetails? = nil) {
            self.productId = productId
            self.productOfferDetails = productOfferDetails
        }
    }

    public struct ProductOfferDetails: Codable, Sendable, Hashable {
        public var offerId: String?
        public var purchaseOptionId: String?
        public var offerTags: [String]?
        public var offerToken: String?
        public var quantity: Int32?
        public var refundableQuantity: Int32?
        /// `CONSUMPTION_STATE_UNSPECIFIED`, `CONSUMPTION_STATE_YET_TO_BE_CONSUMED`, `CONSUMPTION_STATE_CONSUMED`.
        public var consumptionState: String?

        public init(
            offerId: String? = nil,
            purchaseOptionId: String? = nil,
            quantity: Int32? = nil,
            refundableQuantity: Int32? = nil,
            consumptionState: String? = nil
        ) {
            self.offerId = offerId
            self.purchaseOptionId = purchaseOptionId
            self.quantity = quantity
            self.refundableQuantity = refundableQuantity
            self.consumptionState = consumptionState
        }
    }

    public struct PurchaseStateContext: Codable, Sendable, Hashable {
        /// `PURCHASE_STATE_UNSPECIFIED`, `PURCHASED`, `CANCELLED` (two Ls), `PENDING`.
        public var purchaseState: String?

        public init(purchaseState: String?) { self.purchaseState = purchaseState }
    }

    public struct TestPurchaseContext: Codable, Sendable, Hashable {
        /// `FOP_TYPE_UNSPECIFIED` or `TEST` (a test card).
        public var fopType: String?

        public init(fopType: String?) { self.fopType = fopType }
    }

    public var isTestPurchase: Bool { testPurchaseContext != nil }
}
