import Foundation

/// The answer of Extend a Subscription Renewal Date.
public struct ExtendRenewalDateResponse: Codable, Hashable, Sendable {
    /// The subscription's original transaction identifier.
    public var originalTransactionId: String?
    /// The subscription purchase event that was extended.
    public var webOrderLineItemId: String?
    /// Whether the renewal date was extended.
    public var success: Bool?
    /// The new renewal date.
    public var effectiveDate: Date?

    public init(
        originalTransactionId: String? = nil,
        webOrderLineItemId: String? = nil,
        success: Bool? = nil,
        effectiveDate: Date? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.success = success
        self.effectiveDate = effectiveDate
    }
}
