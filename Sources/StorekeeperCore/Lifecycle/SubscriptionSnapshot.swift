import Foundation

/// What a message says about a subscription at its signed date: merged into the stored state when it is newer
/// than what was applied before (messages are ordered per `originalTransactionId` by `signedDate`).
public struct SubscriptionSnapshot: Sendable, Hashable {
    public var originalTransactionId: String
    /// The store that bills it (kept from the first snapshot: a subscription never changes store).
    public var store: Store = .appStore
    public var bundleId: String
    public var productId: String
    public var subscriptionGroup: String?
    public var environment: StoreEnvironment
    public var state: SubscriptionState?
    /// Why it expired: `VOLUNTARY`, `BILLING_RETRY`, `PRICE_INCREASE`, `PRODUCT_NOT_FOR_SALE`, `REFUNDED`, ...
    public var expirationReason: String?
    public var autoRenew: Bool?
    public var autoRenewProductId: String?
    public var expiresAt: Date?
    public var gracePeriodExpiresAt: Date?
    /// The offer of the current period, and its id.
    public var offerType: OfferKind?
    public var offerId: String?
    /// `PENDING` or `ACCEPTED` while a price increase is in play.
    public var priceIncrease: String?
    public var latestTransactionId: String?
    /// `MONTHLY` or `BILLED_UPFRONT` as the latest transaction says (nil: the message did not say).
    public var billingPlan: String?
    /// The 12-month commitment a monthly plan is in (nil for billing up front).
    public var commitment: SubscriptionCommitment?
    /// The message that produced this snapshot, e.g. `DID_RENEW/BILLING_RECOVERY`.
    public var event: String
    public var signedDate: Date

    public init(
        originalTransactionId: String,
        bundleId: String,
        productId: String,
        subscriptionGroup: String? = nil,
        environment: StoreEnvironment,
        state: SubscriptionState? = nil,
        expirationReason: String? = nil,
        autoRenew: Bool? = nil,
        autoRenewProductId: String? = nil,
        expiresAt: Date? = nil,
        gracePeriodExpiresAt: Date? = nil,
        offerType: OfferKind? = nil,
        offerId: String? = nil,
        priceIncrease: String? = nil,
        latestTransactionId: String? = nil,
        billingPlan: String? = nil,
        commitment: SubscriptionCommitment? = nil,
        event: String,
        signedDate: Date
    ) {
        self.originalTransactionId = originalTransactionId
        self.bundleId = bundleId
        self.productId = productId
        self.subscriptionGroup = subscriptionGroup
        self.environment = environment
        self.state = state
        self.expirationReason = expirationReason
        self.autoRenew = autoRenew
        self.autoRenewProductId = autoRenewProductId
        self.expiresAt = expiresAt
        self.gracePeriodExpiresAt = gracePeriodExpiresAt
        self.offerType = offerType
        self.offerId = offerId
        self.priceIncrease = priceIncrease
        self.latestTransactionId = latestTransactionId
        self.billingPlan = billingPlan
        self.commitment = commitment
        self.event = event
        self.signedDate = signedDate
    }
}
