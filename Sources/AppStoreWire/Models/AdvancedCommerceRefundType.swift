/// How much of an Advanced Commerce item was refunded.
public struct AdvancedCommerceRefundType: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A full refund.
    public static let full: Self = "FULL"
    /// A prorated refund.
    public static let prorated: Self = "PRORATED"
    /// A custom amount.
    public static let custom: Self = "CUSTOM"

    public static let knownValues: [Self] = [.full, .prorated, .custom]
}
