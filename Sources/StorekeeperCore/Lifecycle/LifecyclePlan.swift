import Foundation

/// What one store message does to Storekeeper's records, decided in full before anything is written: the
/// transactions to deliver, the steps beyond delivery (clawbacks, reinstatements, extensions, refund questions,
/// seats, consent) and the subscription state to merge. The ledger executes it inside one database transaction.
public struct LifecyclePlan: Sendable, Hashable {
    /// How a transaction is taken back.
    public enum Revocation: String, Sendable, Hashable {
        /// The store refunded it (in full, or the share it signed).
        case refund
        /// Access was withdrawn (Family Sharing, an organization's assignment).
        case revoke
    }

    /// How the store decided a refund request.
    public enum RefundDecision: String, Sendable, Hashable {
        case refunded
        case declined
    }

    /// One step beyond delivery and the state.
    public enum Step: Sendable, Hashable {
        /// Take back what the transaction delivered from `from` on (the transaction carries the refunded share).
        case takeBack(VerifiedTransaction, from: Date, as: Revocation)
        /// Restore what a refund took back.
        case reinstate(transactionId: String)
        /// Extend the transaction's grant to `to`.
        case extend(transactionId: String, to: Date, reason: String)
        /// Queue an answer for the store's refund question about the transaction.
        case openRefundQuestion(VerifiedTransaction, reason: String?)
        /// Close an open refund question: the store decided first.
        case closeRefundQuestion(transactionId: String, decision: RefundDecision)
        /// Record the seats the store refunded on the purchaser's transaction.
        case refundSeats(VerifiedTransaction, seats: Int)
        /// End the seat claims the store released.
        case releaseSeats([String])
        /// Tell each user of the install that consent was withdrawn.
        case consentRescinded(install: String)
        /// Put a fact on the audit trail of whoever holds the transaction, for support to act on.
        case note(transactionId: String, action: AuditAction, detail: String)
    }

    /// Transactions to deliver (undelivered ones get a record, or are parked when nobody can be attributed).
    public var deliver: [VerifiedTransaction]
    public var steps: [Step]
    /// The state to merge into the subscription's, by `signedDate`.
    public var state: SubscriptionSnapshot?
    /// Why nothing more happens, for messages that are recorded only.
    public var recordOnly: String?

    public init(deliver: [VerifiedTransaction] = [], steps: [Step] = [], state: SubscriptionSnapshot? = nil, recordOnly: String? = nil) {
        self.deliver = deliver
        self.steps = steps
        self.state = state
        self.recordOnly = recordOnly
    }

    /// Whether the plan is only deliveries and a state merge, which the ledger applies for a whole batch with
    /// set-based statements. Derived from the steps, so a new step is never skipped on the batched path.
    public var isBatchable: Bool { steps.isEmpty }
}

/// The lifecycle rules: one pure function from a store message to its complete plan. Every kind has an entry; the
/// store's own names never reach this far (the server's mapping turns them into ``StoreMessage/Kind``).
public enum LifecyclePlanner {
    public static func plan(_ message: StoreMessage) -> LifecyclePlan {
        var plan = LifecyclePlan(state: message.snapshot)
        if delivers(message) { plan.deliver = message.transactions }
        switch message.source {
        case .receipt:
            // A confirmed receipt is the whole truth: every cancelled entry is taken back from its cancellation date
            // (refunds, and the upgrade and crossgrade cancellations alike).
            let revocation: LifecyclePlan.Revocation = message.kind == .revoked ? .revoke : .refund
            for transaction in message.cancelled {
                guard let date = transaction.revocationDate else { continue }
                plan.steps.append(.takeBack(transaction, from: date, as: revocation))
            }
        case .notification, .statusCheck:
            if let focus = message.focus { plan.steps += steps(message, about: focus) }
        }
        switch message.kind {
        case .seatsReleased(let claims) where !claims.isEmpty:
            plan.steps.append(.releaseSeats(claims))
        case .consentRescinded(let install?):
            plan.steps.append(.consentRescinded(install: install))
            plan.recordOnly = "a parent or guardian withdrew consent; the app decides what follows"
        case .consentRescinded(nil):
            plan.recordOnly = "a parent or guardian withdrew consent; the app must act on it"
        case .refundDeclined:
            plan.recordOnly = "the store declined the refund request"
        case .informational(let why):
            plan.recordOnly = why
        default:
            break
        }
        return plan
    }

    /// Whether the message's transactions are delivered (if Storekeeper has not yet): whatever the store confirms in a
    /// receipt, and every notification kind that carries a paid-for transaction.
    static func delivers(_ message: StoreMessage) -> Bool {
        if case .informational = message.kind { return false }
        if message.source == .receipt { return true }
        switch message.kind {
        case .purchased, .renewed, .refunded, .refundReversed, .revoked, .consumptionQuestion, .renewalExtended, .status:
            return true
        case .planChanged(let change), .offerRedeemed(let change):
            return change == .startsNow
        case .renewalStatusChanged, .billingFailed, .gracePeriodExpired, .expired, .priceChange, .refundDeclined, .seatsReleased,
            .consentRescinded, .renewalExtensionFailed, .informational:
            return false
        }
    }

    /// A notification's or status check's steps about the transaction it concerns.
    static func steps(_ message: StoreMessage, about focus: VerifiedTransaction) -> [LifecyclePlan.Step] {
        var steps: [LifecyclePlan.Step] = []
        let from = focus.revocationDate ?? message.signedDate
        switch message.kind {
        case .refunded(.purchase):
            steps.append(.takeBack(focus, from: from, as: .refund))
            steps.append(.closeRefundQuestion(transactionId: focus.transactionId, decision: .refunded))
        case .refunded(.seats):
            // The purchaser keeps the subscription for the seats left.
            steps.append(.closeRefundQuestion(transactionId: focus.transactionId, decision: .refunded))
            if let seats = focus.commerce.refundedSeats { steps.append(.refundSeats(focus, seats: seats)) }
        case .refundDeclined:
            steps.append(.closeRefundQuestion(transactionId: focus.transactionId, decision: .declined))
        case .revoked:
            steps.append(.takeBack(focus, from: from, as: .revoke))
        case .refundReversed:
            steps.append(.reinstate(transactionId: focus.transactionId))
        case .renewalExtended:
            if let expires = focus.expiresDate, focus.revocationDate == nil {
                steps.append(.extend(transactionId: focus.transactionId, to: expires, reason: "the store extended the renewal date"))
            }
        case .billingFailed(gracePeriod: true):
            if let grace = message.snapshot?.gracePeriodExpiresAt {
                steps.append(
                    .extend(
                        transactionId: focus.transactionId,
                        to: grace,
                        reason: "billing grace period: service continues while the store retries the charge"
                    )
                )
            }
        case .consumptionQuestion(let reason):
            steps.append(.openRefundQuestion(focus, reason: reason))
        case .renewalExtensionFailed:
            steps.append(
                .note(
                    transactionId: focus.transactionId,
                    action: .subscriptionExtensionFailed,
                    detail: "the store could not extend this subscription's renewal date when it extended every subscriber's; "
                        + "the customer did not get the extra days (make it up another way, or extend this one alone)"
                )
            )
        case .status where focus.revocationDate != nil:
            // The store's current view shows a refund no notification brought.
            steps.append(.takeBack(focus, from: from, as: .refund))
        default:
            break
        }
        return steps
    }
}
