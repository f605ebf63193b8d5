/// A discount offer on an Advanced Commerce subscription item.
public struct AdvancedCommerceOffer: Codable, Sendable, Hashable {
    /// The duration of one offer period.
    public var period: AdvancedCommerceOfferPeriod?
    /// How many periods the offer lasts.
    public var periodCount: Int32?
    /// The offer price, in milliunits.
    public var price: Int64?
    /// Why the offer was granted.
    public var reason: AdvancedCommerceOfferReason?

    public init(
        period: AdvancedCommerceOfferPeriod? = nil,
        periodCount: Int32? = nil,
        price: Int64? = nil,
        reason: AdvancedCommerceOfferReason? = nil
    ) {
        self.period = period
        self.periodCount = periodCount
        self.price = price
        self.reason = reason
    }
}
