import Foundation

/// Seats bought at one price (`MultiSeatPriceTier`).
public struct MultiSeatPriceTier: Codable, Sendable, Hashable {
    /// The price of one seat in this tier, in milliunits of the transaction's currency.
    public var tierPrice: Int64?
    /// How many seats were bought at this price.
    public var tierQuantity: Int32?

    public init(tierPrice: Int64? = nil, tierQuantity: Int32? = nil) {
        self.tierPrice = tierPrice
        self.tierQuantity = tierQuantity
    }
}
