/// Where one auto-renewable subscription (one `originalTransactionId`) stands, as Storekeeper follows it.
public enum SubscriptionState: String, Sendable, Hashable, Codable, CaseIterable {
    case active
    /// A renewal failed and Apple's billing grace period keeps service on while it retries.
    case gracePeriod = "grace_period"
    /// A renewal failed; no service while Apple retries (up to 60 days).
    case billingRetry = "billing_retry"
    case expired
    /// Family Sharing access was withdrawn (`REVOKE`).
    case revoked
    /// The current period was refunded (`REFUND`, V1 `CANCEL`).
    case refunded
    /// The subscriber paused it (Google Play): no service until it resumes.
    case paused

    /// From Apple's subscription status (1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked).
    public init?(appleStatus: Int) {
        switch appleStatus {
        case 1: self = .active
        case 2: self = .expired
        case 3: self = .billingRetry
        case 4: self = .gracePeriod
        case 5: self = .revoked
        default: return nil
        }
    }

    /// Whether the subscriber has service in this state.
    public var hasService: Bool { self == .active || self == .gracePeriod }
}
