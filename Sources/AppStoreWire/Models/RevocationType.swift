/// How a transaction was revoked (`revocationType`, App Store Server API 1.19).
public struct RevocationType: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A full refund.
    public static let refundFull: Self = "REFUND_FULL"
    /// A prorated refund; see `revocationPercentage`.
    public static let refundProrated: Self = "REFUND_PRORATED"
    /// Access lost through Family Sharing.
    public static let familyRevoke: Self = "FAMILY_REVOKE"
    /// The group's purchaser took an assigned purchase away (API 1.22).
    public static let assignmentRevoke: Self = "ASSIGNMENT_REVOKE"

    public static let knownValues: [Self] = [.refundFull, .refundProrated, .familyRevoke, .assignmentRevoke]
}
