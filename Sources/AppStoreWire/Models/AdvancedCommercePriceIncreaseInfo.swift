/// A pending or scheduled price increase on an Advanced Commerce renewal item.
public struct AdvancedCommercePriceIncreaseInfo: Codable, Sendable, Hashable {
    /// SKUs whose price changes together with this item.
    public var dependentSKUs: [String]?
    /// The new price, in milliunits.
    public var price: Int64?
    /// Where the increase stands.
    public var status: AdvancedCommercePriceIncreaseStatus?

    public init(dependentSKUs: [String]? = nil, price: Int64? = nil, status: AdvancedCommercePriceIncreaseStatus? = nil) {
        self.dependentSKUs = dependentSKUs
        self.price = price
        self.status = status
    }
}
