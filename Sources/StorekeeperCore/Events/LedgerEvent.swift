import Foundation

/// A change the app's backend would care about, written to the outbox in the same transaction as the change.
public struct LedgerEvent: Sendable, Hashable {
    /// What happened.
    public enum EventType: String, Sendable, Hashable, CaseIterable {
        /// A transaction was delivered (`details`: transaction, product, grant).
        case delivered = "purchase.delivered"
        /// A verified purchase could not be attributed or delivered and waits on the pending-recovery list.
        case parked = "purchase.parked"
        /// Apple refunded or revoked a transaction and what it gave was taken back.
        case refunded = "purchase.refunded"
        /// Apple reversed a refund and what was taken back is restored.
        case reinstated = "purchase.reinstated"
        /// A subscription's state changed (started, renewed into a new state, grace, billing retry, expired, ...).
        case subscriptionChanged = "subscription.changed"
        /// Coins were spent, adjusted, clawed back or moved.
        case walletChanged = "wallet.changed"
        /// A guest was merged into an account.
        case userMerged = "user.merged"
        /// A subscription or unlock moved to another user (the transfer policy).
        case transferred = "purchase.transferred"
        /// Storekeeper answered Apple's refund question.
        case consumptionAnswered = "consumption.answered"
        /// Support granted or revoked an entitlement by hand (`details`: change, grant, endsAt, reason).
        case entitlementChanged = "entitlement.changed"
        /// Apple's notification about one of the user's purchases failed every attempt and is a dead letter
        /// (`details`: notificationId, notificationType, subtype, originalTransactionId, error). About a transaction
        /// nobody holds, the event belongs to ``UserID/nobody``.
        case notificationDeadLettered = "notification.dead_lettered"
        /// A parent or guardian withdrew consent for a minor using the app (`RESCIND_CONSENT`); one per user whose
        /// purchases came from that install (`details`: appTransactionId, notificationId, environment). Storekeeper
        /// takes nothing back: what the app must do is the app's decision.
        case consentRescinded = "consent.rescinded"
        /// A member's seat on a multiseat subscription changed (`details.change`: `claimed`, `released`, or
        /// `subscription` when the purchaser's subscription changed under it — renewed, refunded, expired; with
        /// originalTransactionId, seatId, seatClaimId, purchaserId and, for `subscription`, the purchaser's event).
        case teamSeatChanged = "team.seat_changed"
        /// A type this version does not know (read from a newer writer).
        case unknown
    }

    public var type: EventType
    public var user: UserID
    /// What the event is about: a transaction id, an original transaction id, a currency, the merged guest.
    public var subject: String
    public var occurredAt: Date
    /// The change, as flat text fields: amounts as decimal integers, moments as epoch milliseconds.
    public var details: [String: String]

    public init(type: EventType, user: UserID, subject: String, occurredAt: Date, details: [String: String] = [:]) {
        self.type = type
        self.user = user
        self.subject = subject
        self.occurredAt = occurredAt
        self.details = details
    }
}
