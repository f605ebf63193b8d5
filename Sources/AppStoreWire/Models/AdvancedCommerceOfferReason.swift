/// Why an Advanced Commerce offer was granted.
public struct AdvancedCommerceOfferReason: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// To acquire a new customer.
    public static let acquisition: Self = "ACQUISITION"
    /// To win back a lapsed customer.
    public static let winBack: Self = "WIN_BACK"
    /// To retain an existing customer.
    public static let retention: Self = "RETENTION"

    public static let knownValues: [Self] = [.acquisition, .winBack, .retention]
}
