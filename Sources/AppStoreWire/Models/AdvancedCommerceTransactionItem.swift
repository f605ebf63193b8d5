import Foundation

/// One SKU in an Advanced Commerce transaction.
public struct AdvancedCommerceTransactionItem: Codable, Sendable, Hashable {
    // MARK: Item

    /// The developer-defined SKU (JSON key `SKU`).
    public var sku: String?
    /// A description the developer provided.
    public var description: String?
    /// A name suitable for display to customers.
    public var displayName: String?

    // MARK: Price and lifecycle

    /// The offer applied to this item, if any.
    public var offer: AdvancedCommerceOffer?
    /// The item's price, in milliunits.
    public var price: Int64?
    /// Refunds of this item.
    public var refunds: [AdvancedCommerceRefund]?
    /// When the item was revoked.
    public var revocationDate: Date?

    public init(
        sku: String? = nil,
        description: String? = nil,
        displayName: String? = nil,
        offer: AdvancedCommerceOffer? = nil,
        price: Int64? = nil,
        refunds: [AdvancedCommerceRefund]? = nil,
        revocationDate: Date? = nil
    ) {
        self.sku = sku
        self.description = description
        self.displayName = displayName
        self.offer = offer
        self.price = price
        self.refunds = refunds
        self.revocationDate = revocationDate
    }

    enum CodingKeys: String, CodingKey {
        case sku = "SKU"
        case description, displayName, offer, price, refunds, revocationDate
    }
}
