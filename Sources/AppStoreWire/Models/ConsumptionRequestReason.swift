/// Why the customer requested a refund, in a `CONSUMPTION_REQUEST` notification's `data`.
public struct ConsumptionRequestReason: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The customer did not intend to make the purchase.
    public static let unintendedPurchase: Self = "UNINTENDED_PURCHASE"
    /// The customer had an issue receiving or using the purchase.
    public static let fulfillmentIssue: Self = "FULFILLMENT_ISSUE"
    /// The customer was not satisfied with the purchase.
    public static let unsatisfiedWithPurchase: Self = "UNSATISFIED_WITH_PURCHASE"
    /// A legal reason.
    public static let legal: Self = "LEGAL"
    /// Another reason.
    public static let other: Self = "OTHER"

    public static let knownValues: [Self] = [
        .unintendedPurchase, .fulfillmentIssue, .unsatisfiedWithPurchase, .legal, .other,
    ]
}
