/// Your preference for the refund decision (`refundPreference` of the v2 ``ConsumptionRequest``).
public struct RefundPreference: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let decline: Self = "DECLINE"
    public static let grantFull: Self = "GRANT_FULL"
    public static let grantProrated: Self = "GRANT_PRORATED"

    public static let knownValues: [Self] = [.decline, .grantFull, .grantProrated]
}
