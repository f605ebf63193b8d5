import Foundation

/// One change to a user's entitlements, wallet or orders, with its cause (invariant 4).
public struct AuditEntry: Sendable, Hashable, Codable {
    /// What changed.
    public var action: AuditAction
    public var user: UserID
    /// The entitlement, currency or order concerned.
    public var subject: String
    /// Coins added (positive) or removed (negative).
    public var amount: Int64?
    public var periodStart: Date?
    public var periodEnd: Date?
    /// Why it changed.
    public var cause: AuditCause
    public var detail: String?
    public var createdAt: Date

    public init(
        action: AuditAction,
        user: UserID,
        subject: String,
        amount: Int64? = nil,
        periodStart: Date? = nil,
        periodEnd: Date? = nil,
        cause: AuditCause,
        detail: String? = nil,
        createdAt: Date
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
