/// How a subscription is billed (`billingPlanType`, `renewalBillingPlanType`, API 1.21).
public struct BillingPlanType: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The whole period is billed up front.
    public static let billedUpfront: Self = "BILLED_UPFRONT"
    /// Billed monthly with a 12-month commitment.
    public static let monthly: Self = "MONTHLY"

    public static let knownValues: [Self] = [.billedUpfront, .monthly]
}
