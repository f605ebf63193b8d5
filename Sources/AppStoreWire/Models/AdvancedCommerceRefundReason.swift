/// The reason recorded for a refund of an Advanced Commerce item.
public struct AdvancedCommerceRefundReason: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The customer did not intend to make the purchase.
    public static let unintendedPurchase: Self = "UNINTENDED_PURCHASE"
    /// The customer had an issue receiving or using the item.
    public static let fulfillmentIssue: Self = "FULFILLMENT_ISSUE"
    /// The customer was not satisfied with the item.
    public static let unsatisfiedWithPurchase: Self = "UNSATISFIED_WITH_PURCHASE"
    /// A legal reason.
    public static let legal: Self = "LEGAL"
    /// Another reason.
    public static let other: Self = "OTHER"
    /// A refund resulting from modifying the subscription's items.
    public static let modifyItemsRefund: Self = "MODIFY_ITEMS_REFUND"
    /// Used to simulate a declined refund when testing.
    public static let simulateRefundDecline: Self = "SIMULATE_REFUND_DECLINE"

    public static let knownValues: [Self] = [
        .unintendedPurchase, .fulfillmentIssue, .unsatisfiedWithPurchase, .legal, .other, .modifyItemsRefund,
        .simulateRefundDecline,
    ]
}
