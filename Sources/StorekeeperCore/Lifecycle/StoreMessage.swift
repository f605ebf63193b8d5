import Foundation

/// One message from a store about purchases after the first — a notification, a receipt the store confirmed, or a
/// status Storekeeper asked for — as a typed, store-neutral fact. Built from the store's wire formats by the server's
/// mapping (one file per format); ``LifecyclePlanner`` turns it into the plan the ledger executes.
public struct StoreMessage: Sendable {
    /// Where the message's facts come from, which decides how far they are trusted.
    public enum Source: Sendable, Hashable {
        /// A signed notification about one transaction.
        case notification
        /// A receipt the store confirmed: every entry is the truth, including each cancellation in it.
        case receipt
        /// The store's answer to Storekeeper asking for a subscription's status.
        case statusCheck
    }

    /// What a change of plan does to the subscription.
    public enum PlanChange: Sendable, Hashable {
        /// A new transaction starts now (upgrades, and the store's same-duration crossgrades).
        case startsNow
        /// Only the next renewal changes (downgrades, different-duration crossgrades, a cancelled downgrade).
        case fromNextRenewal
    }

    /// How much of a purchase a refund covers.
    public enum RefundScope: Sendable, Hashable {
        /// The purchase, in full or by the share the store signed on the transaction.
        case purchase
        /// Some seats of a multiseat subscription; the subscription stays for the rest.
        case seats
    }

    /// What happened, in the store-neutral vocabulary the lifecycle rules decide on.
    public enum Kind: Sendable, Hashable {
        /// A first period or a one-time purchase.
        case purchased
        /// A new period; `recovered` when it follows a billing failure.
        case renewed(recovered: Bool)
        /// The customer changed plan.
        case planChanged(PlanChange)
        /// The customer redeemed an offer on an active subscription.
        case offerRedeemed(PlanChange)
        /// Auto-renew switched on or off.
        case renewalStatusChanged
        /// A renewal charge failed; service continues to the grace period's end when there is one.
        case billingFailed(gracePeriod: Bool)
        /// The grace period ended with the charge still failing.
        case gracePeriodExpired
        /// The subscription ended (the reason is kept with its state).
        case expired
        /// A price change was announced or consented to (no entitlement changes).
        case priceChange
        /// The store refunded.
        case refunded(RefundScope)
        /// The store declined a refund request.
        case refundDeclined
        /// The store reversed an earlier refund.
        case refundReversed
        /// Access the customer did not pay for was withdrawn (Family Sharing, an organization's assignment).
        case revoked
        /// The store extended the subscription's renewal date.
        case renewalExtended
        /// The store could not extend this subscription in an extension for all subscribers: the customer goes
        /// without the days the others got.
        case renewalExtensionFailed
        /// The customer asked the store for a refund; the store asks what was consumed.
        case consumptionQuestion(reason: String?)
        /// The store released seat claims of a multiseat subscription; their members' access ends.
        case seatsReleased([String])
        /// A parent or guardian withdrew consent for the app install.
        case consentRescinded(install: String?)
        /// The store's current view of the subscription, as Storekeeper asked for it.
        case status
        /// Recorded only, with why.
        case informational(String)
    }

    /// The inbox id (notification UUID, `v1:<hash>`) or `status:<original>:<signedDate>` for a status check.
    public var id: String
    public var source: Source
    public var kind: Kind
    /// The store's own name for the message (`DID_RENEW/BILLING_RECOVERY`, `V1 CANCEL`), for logs and operators.
    public var label: String
    public var bundleId: String
    public var environment: StoreEnvironment
    /// When the store signed the message (unsigned formats: when Storekeeper received it).
    public var signedDate: Date
    /// The transactions the message delivers.
    public var transactions: [VerifiedTransaction]
    /// Receipts: every confirmed entry with a cancellation date, taken back from that date.
    public var cancelled: [VerifiedTransaction]
    /// The transaction the message is about.
    public var focus: VerifiedTransaction?
    /// The subscription's state as the message tells it.
    public var snapshot: SubscriptionSnapshot?

    public init(
        id: String,
        source: Source,
        kind: Kind,
        label: String,
        bundleId: String,
        environment: StoreEnvironment,
        signedDate: Date,
        transactions: [VerifiedTransaction],
        cancelled: [VerifiedTransaction] = [],
        focus: VerifiedTransaction?,
        snapshot: SubscriptionSnapshot?
    ) {
        self.id = id
        self.source = source
        self.kind = kind
        self.label = label
        self.bundleId = bundleId
        self.environment = environment
        self.signedDate = signedDate
        self.transactions = transactions
        self.cancelled = cancelled
        self.focus = focus
        self.snapshot = snapshot
    }
}

extension StoreMessage.Kind {
    /// Whether the message changes the subscription's state (the mapping builds a snapshot only then).
    public var updatesSubscription: Bool {
        switch self {
        case .purchased, .renewed, .planChanged, .offerRedeemed, .renewalStatusChanged, .billingFailed, .gracePeriodExpired,
            .expired, .priceChange, .refunded, .refundReversed, .revoked, .renewalExtended, .status:
            true
        case .refundDeclined, .consumptionQuestion, .seatsReleased, .consentRescinded, .renewalExtensionFailed, .informational:
            false
        }
    }

    /// The state the message implies when the store's own status field is absent.
    public var impliedState: SubscriptionState? {
        switch self {
        case .purchased, .renewed: .active
        case .billingFailed(let grace): grace ? .gracePeriod : .billingRetry
        case .gracePeriodExpired: .billingRetry
        case .expired: .expired
        case .revoked: .revoked
        default: nil
        }
    }
}
