/// The payment mode of the offer in `offerDiscountType`.
public struct OfferDiscountType: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A free trial.
    public static let freeTrial: Self = "FREE_TRIAL"
    /// A discounted price for each billing period of the offer.
    public static let payAsYouGo: Self = "PAY_AS_YOU_GO"
    /// A single discounted payment for the whole offer duration.
    public static let payUpFront: Self = "PAY_UP_FRONT"
    /// A one-time offer code on a non-subscription in-app purchase (API 1.18).
    public static let oneTime: Self = "ONE_TIME"

    public static let knownValues: [Self] = [.freeTrial, .payAsYouGo, .payUpFront, .oneTime]
}
