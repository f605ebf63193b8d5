import Foundation

/// A refund of an Advanced Commerce transaction item.
public struct AdvancedCommerceRefund: Codable, Sendable, Hashable {
    /// The refunded amount, in milliunits.
    public var refundAmount: Int64?
    /// When the refund happened.
    public var refundDate: Date?
    /// Why the item was refunded.
    public var refundReason: AdvancedCommerceRefundReason?
    /// Whether the refund was full, prorated or custom.
    public var refundType: AdvancedCommerceRefundType?

    public init(
        refundAmount: Int64? = nil,
        refundDate: Date? = nil,
        refundReason: AdvancedCommerceRefundReason? = nil,
        refundType: AdvancedCommerceRefundType? = nil
    ) {
        self.refundAmount = refundAmount
        self.refundDate = refundDate
        self.refundReason = refundReason
        self.refundType = refundType
    }
}
