import Foundation

/// One message from Apple about purchases after the first — a V2 or V1 notification, or a status Storekeeper asked
/// for — reduced to what the lifecycle rules need. Built from Apple's formats at the edge (the server's Apple
/// mapping); the ledger applies it.
public struct AppleMessage: Sendable {
    /// The inbox id (notification UUID, `v1:<hash>`) or `status:<original>:<signedDate>` for a status check.
    public var id: String
    /// `v2`, `v1`.
    public var format: String
    public var type: String
    public var subtype: String?
    public var effect: LifecycleEffect
    public var bundleId: String
    public var environment: String
    /// Apple's `signedDate` (V1 has none: when Storekeeper received it).
    public var signedDate: Date
    /// The transactions the message delivers: V2 its one transaction; V1 and receipt checks the auto-renewable
    /// entries Apple's `verifyReceipt` confirmed.
    public var transactions: [VerifiedTransaction]
    /// V1 and receipt checks: every confirmed entry with a cancellation date, taken back from that date.
    public var cancelled: [VerifiedTransaction]
    /// The transaction the message is about (V2's `signedTransactionInfo`, V1's latest entry).
    public var focus: VerifiedTransaction?
    public var snapshot: SubscriptionSnapshot?
    public var consumptionReason: String?
    /// The app install a message about the app concerns (`RESCIND_CONSENT`'s verified app transaction).
    public var appTransactionId: String?
    /// The seat claims Apple released (`UNCLAIM_SEATS`' `unclaimInfo.unclaimSeatIds`).
    public var unclaimSeatIds: [String] = []

    public init(
        id: String,
        format: String,
        type: String,
        subtype: String?,
        effect: LifecycleEffect,
        bundleId: String,
        environment: String,
        signedDate: Date,
        transactions: [VerifiedTransaction],
        cancelled: [VerifiedTransaction] = [],
        focus: VerifiedTransaction?,
        snapshot: SubscriptionSnapshot?,
        consumptionReason: String?
    ) {
        self.id = id
        self.format = format
        self.type = type
        self.subtype = subtype
        self.effect = effect
        self.bundleId = bundleId
        self.environment = environment
        self.signedDate = signedDate
        self.transactions = transactions
        self.cancelled = cancelled
        self.focus = focus
        self.snapshot = snapshot
        self.consumptionReason = consumptionReason
    }

    /// `TYPE/SUBTYPE`, as stored with a subscription's state.
    public var event: String { subtype.map { "\(type)/\($0)" } ?? type }

    /// Whether the message's only effects are delivery and a state update (the common case: purchases, renewals,
    /// renewal preference and status changes, expiries), which the ledger applies with set-based statements.
    public var isPlain: Bool {
        format == "v2" && appTransactionId == nil && unclaimSeatIds.isEmpty && effect.revoke == nil && !effect.reinstate && !effect.extendToExpiry
            && !effect.extendToGracePeriodEnd
            && !effect.answerConsumptionRequest && !effect.closeConsumptionRequest && focus?.revocationDate == nil
    }
}
