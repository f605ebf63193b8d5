/// `SubscriptionPurchaseV2.subscriptionState`.
public struct SubscriptionState: PlayStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let unspecified: Self = "SUBSCRIPTION_STATE_UNSPECIFIED"
    /// Awaiting payment at signup: no access, not to be acknowledged.
    public static let pending: Self = "SUBSCRIPTION_STATE_PENDING"
    public static let active: Self = "SUBSCRIPTION_STATE_ACTIVE"
    public static let paused: Self = "SUBSCRIPTION_STATE_PAUSED"
    /// Payment declined, still entitled.
    public static let inGracePeriod: Self = "SUBSCRIPTION_STATE_IN_GRACE_PERIOD"
    /// Account hold: payment declined, not entitled.
    public static let onHold: Self = "SUBSCRIPTION_STATE_ON_HOLD"
    /// Auto-renew off, entitled until the items' expiry.
    public static let canceled: Self = "SUBSCRIPTION_STATE_CANCELED"
    public static let expired: Self = "SUBSCRIPTION_STATE_EXPIRED"
    public static let pendingPurchaseCanceled: Self = "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED"

    public static let knownValues: [Self] = [
        .unspecified, .pending, .active, .paused, .inGracePeriod, .onHold, .canceled, .expired, .pendingPurchaseCanceled,
    ]

    /// Whether Google's lifecycle rules grant access in this state (canceled: until the items expire).
    public var grantsAccess: Bool { self == .active || self == .inGracePeriod || self == .canceled }
}

/// `acknowledgementState` of a subscription or a v2 product purchase.
public struct AcknowledgementState: PlayStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let unspecified: Self = "ACKNOWLEDGEMENT_STATE_UNSPECIFIED"
    public static let pending: Self = "ACKNOWLEDGEMENT_STATE_PENDING"
    public static let acknowledged: Self = "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED"

    public static let knownValues: [Self] = [.unspecified, .pending, .acknowledged]
}
