/// One SKU in an Advanced Commerce subscription's next renewal.
public struct AdvancedCommerceRenewalItem: Codable, Sendable, Hashable {
    // MARK: Item

    /// The developer-defined SKU (JSON key `SKU`).
    public var sku: String?
    /// A description the developer provided.
    public var description: String?
    /// A name suitable for display to customers.
    public var displayName: String?

    // MARK: Price

    /// The offer that applies at renewal, if any.
    public var offer: AdvancedCommerceOffer?
    /// The renewal price, in milliunits.
    public var price: Int64?
    /// A pending or scheduled price increase.
    public var priceIncreaseInfo: AdvancedCommercePriceIncreaseInfo?

    public init(
        sku: String? = nil,
        description: String? = nil,
        displayName: String? = nil,
        offer: AdvancedCommerceOffer? = nil,
        price: Int64? = nil,
        priceIncreaseInfo: AdvancedCommercePriceIncreaseInfo? = nil
    ) {
        self.sku = sku
        self.description = description
        self.displayName = displayName
        self.offer = offer
        self.price = price
        self.priceIncreaseInfo = priceIncreaseInfo
    }

    enum CodingKeys: String, CodingKey {
        case sku = "SKU"
        case description, displayName, offer, price, priceIncreaseInfo
    }
}
