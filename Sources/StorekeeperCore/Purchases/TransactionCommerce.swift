/// What a transaction says about money and offers, as Apple reports it: kept with every delivered transaction for
/// revenue, reconciliation and support. Everything is optional: legacy receipts carry only some of it.
public struct TransactionCommerce: Sendable, Hashable, Codable {
    /// Ownership types whose transactions are not the customer's sale: a family member's copy and a purchase an
    /// organization or group assigned (the purchaser's transaction is the sale, in Apple's reports too).
    public static let notSales: Set<String> = ["FAMILY_SHARED", "ASSIGNED"]

    /// Whether a transaction of `ownershipType` is the customer's own sale.
    public static func isSale(ownershipType: String?) -> Bool { ownershipType.map { !notSales.contains($0) } ?? true }

    /// Whether this transaction is the customer's own sale (not shared with or assigned to them).
    public var isSale: Bool { Self.isSale(ownershipType: ownershipType) }

    /// The customer price in milliunits of `currency` (9990 is 9.99), tax included where the storefront includes it.
    public var price: Int64?
    /// ISO 4217.
    public var currency: String?
    /// ISO 3166-1 alpha-3 (`USA`), and Apple's storefront id.
    public var storefront: String?
    public var storefrontId: String?
    /// The offer of this transaction: id, discount type (`FREE_TRIAL`, `PAY_AS_YOU_GO`, `PAY_UP_FRONT`,
    /// `ONE_TIME`) and period (ISO 8601 duration).
    public var offerId: String?
    public var offerDiscountType: String?
    public var offerPeriod: String?
    public var appTransactionId: String?
    /// `PURCHASE` or `RENEWAL`.
    public var transactionReason: String?
    public var webOrderLineItemId: String?
    /// `PURCHASED`, `FAMILY_SHARED` or `ASSIGNED` (an organization or group assigned it).
    public var ownershipType: String?
    /// `REFUND_FULL`, `REFUND_PRORATED`, `FAMILY_REVOKE`, and the refunded share in milliunits (100000 is all).
    public var revocationType: String?
    public var revocationPercentage: Int?
    /// Seats of a multiseat purchase Apple refunded (`multiSeatInfo.revokedSeatQuantity`): the purchase stands for
    /// the rest.
    public var refundedSeats: Int?
    /// The fee the store says it took, in thousandths (Google Play's order: 150 or 300); nil: Storekeeper estimates it.
    public var storeFeePermille: Int?

    public init(
        price: Int64? = nil,
        currency: String? = nil,
        storefront: String? = nil,
        storefrontId: String? = nil,
        offerId: String? = nil,
        offerDiscountType: String? = nil,
        offerPeriod: String? = nil,
        appTransactionId: String? = nil,
        transactionReason: String? = nil,
        webOrderLineItemId: String? = nil,
        ownershipType: String? = nil,
        revocationType: String? = nil,
        revocationPercentage: Int? = nil,
        refundedSeats: Int? = nil,
        storeFeePermille: Int? = nil
    ) {
        self.price = price
        self.currency = currency
        self.storefront = storefront
        self.storefrontId = storefrontId
        self.offerId = offerId
        self.offerDiscountType = offerDiscountType
        self.offerPeriod = offerPeriod
        self.appTransactionId = appTransactionId
        self.transactionReason = transactionReason
        self.webOrderLineItemId = webOrderLineItemId
        self.ownershipType = ownershipType
        self.revocationType = revocationType
        self.revocationPercentage = revocationPercentage
        self.refundedSeats = refundedSeats
        self.storeFeePermille = storeFeePermille
    }
}
