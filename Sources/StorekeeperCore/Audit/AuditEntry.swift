import Foundation

/// One change to a user's entitlements, wallet or orders, with its cause (invariant 4).
public struct AuditEntry: Sendable, Hashable, Codable {
    /// What changed: `entitlement.granted`, `entitlement.transferred_out`, `wallet.credited`, `wallet.debited`,
    /// `order.delivered`, `user.merged`, `transaction.claim_refused`, ...
    public var action: String
    public var user: UserID
    /// The entitlement, currency or order concerned.
    public var subject: String
    /// Coins added (positive) or removed (negative).
    public var amount: Int64?
    public var periodStart: Date?
    public var periodEnd: Date?
    /// `transaction:<id>`, `order:<id>`, `admin:<key name>`, `spend:<idempotency key>`, `merge:<guest>`.
    public var cause: String
    public var detail: String?
    public var createdAt: Date

    public init(
        action: String, user: UserID, subject: String, amount: Int64? = nil, periodStart: Date? = nil,
        periodEnd: Date? = nil, cause: String, detail: String? = nil, createdAt: Date
    ) {
        self.action = action
        self.user = user
        self.subject = subject
        self.amount = amount
        self.periodStart = periodStart
        self.periodEnd = periodEnd
        self.cause = cause
        self.detail = detail
        self.createdAt = createdAt
    }
}
