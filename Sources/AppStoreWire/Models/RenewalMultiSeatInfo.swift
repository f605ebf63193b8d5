import Foundation

/// A multiseat subscription's renewal info `multiSeatInfo` (API 1.23): the price tiers of the next period.
public struct RenewalMultiSeatInfo: Codable, Sendable, Hashable {
    public var renewalPriceTiers: [MultiSeatPriceTier]?

    public init(renewalPriceTiers: [MultiSeatPriceTier]? = nil) { self.renewalPriceTiers = renewalPriceTiers }
}
