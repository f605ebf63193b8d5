/// The kind of subscription offer or offer code in `offerType` (transaction and renewal info).
public struct OfferType: OpenIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// An introductory offer.
    public static let introductory: Self = 1
    /// A promotional offer.
    public static let promotional: Self = 2
    /// An offer with a subscription offer code.
    public static let offerCode: Self = 3
    /// A win-back offer.
    public static let winBack: Self = 4
    /// A retention offer: offered while the customer was about to cancel (Retention Messaging, late 2026).
    public static let retention: Self = 5

    public static let knownValues: [Self] = [.introductory, .promotional, .offerCode, .winBack, .retention]
}
