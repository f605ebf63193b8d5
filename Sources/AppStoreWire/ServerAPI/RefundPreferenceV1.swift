/// Your preference for the refund decision (`refundPreference` of ``ConsumptionRequestV1``).
public struct RefundPreferenceV1: OpenIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let undeclared: Self = 0
    public static let preferGrant: Self = 1
    public static let preferDecline: Self = 2
    public static let noPreference: Self = 3

    public static let knownValues: [Self] = [.undeclared, .preferGrant, .preferDecline, .noPreference]
}
