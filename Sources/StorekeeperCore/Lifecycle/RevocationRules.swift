import Foundation

/// How Apple's refunds, revocations and reversals of one transaction combine, whatever order they arrive in
/// (pure; the ledger applies the decision).
public enum RevocationRules {
    /// What is stored about a transaction's revocation.
    public struct Record: Sendable, Hashable {
        /// `revoked` or `reinstated`.
        public var status: String
        /// The `signedDate` of Apple's latest word applied.
        public var decidedAt: Date
        public var generation: Int64

        public init(status: String, decidedAt: Date, generation: Int64) {
            self.status = status
            self.decidedAt = decidedAt
            self.generation = generation
        }
    }

    /// What a refund or revocation signed at `decidedAt` does.
    public enum RevokeDecision: Sendable, Hashable {
        /// Take it back; the record's next generation.
        case revoke(generation: Int64)
        /// Already taken back, or a reversal signed later was applied: nothing changes.
        case unchanged
    }

    public static func revoke(given record: Record?, decidedAt: Date) -> RevokeDecision {
        guard let record else { return .revoke(generation: 1) }
        if record.status == "revoked" { return .unchanged }
        if record.decidedAt > decidedAt { return .unchanged }
        return .revoke(generation: record.generation + 1)
    }

    /// What a reversal signed at `decidedAt` does.
    public enum ReinstateDecision: Sendable, Hashable {
        /// Restore what the revocation took.
        case reinstate
        /// No refund yet: remember the reversal so a later refund signed before it changes nothing.
        case rememberEarly
        /// Nothing to restore (already reinstated, or the refund is newer than this reversal).
        case unchanged
    }

    public static func reinstate(given record: Record?, decidedAt: Date) -> ReinstateDecision {
        guard let record else { return .rememberEarly }
        guard record.status == "revoked", record.decidedAt <= decidedAt else { return .unchanged }
        return .reinstate
    }
}
