import Foundation

/// The decoded payload of a `signedRenewalInfo` JWS: the renewal state of an auto-renewable subscription.
///
/// Every field is optional because Apple omits fields that do not apply. Renewal info carries neither a
/// bundle identifier nor an `appAppleId`, so its claimed identity is the environment only.
public struct JWSRenewalInfoDecodedPayload: AppStoreSignedPayload, Codable, Sendable, Hashable {
    // MARK: Identifiers

    /// The original transaction identifier of the subscription.
    public var originalTransactionId: String?
    /// The product identifier of the current subscription period.
    public var productId: String?
    /// The product identifier that renews at the next billing period.
    public var autoRenewProductId: String?
    /// The token the app set when purchasing, as Apple sent it (see ``appAccountTokenUUID``).
    public var appAccountToken: String?
    /// The app-download transaction identifier.
    public var appTransactionId: String?

    // MARK: Renewal state

    /// Whether the subscription renews automatically.
    public var autoRenewStatus: AutoRenewStatus?
    /// Why the subscription expired (present only once it has).
    public var expirationIntent: ExpirationIntent?
    /// Whether the App Store is still trying to bill the customer for an expired subscription.
    public var isInBillingRetryPeriod: Bool?
    /// When the billing grace period ends.
    public var gracePeriodExpiresDate: Date?
    /// Whether the customer responded to a price increase.
    public var priceIncreaseStatus: PriceIncreaseStatus?

    // MARK: Offer at next renewal

    /// The kind of offer that applies at the next renewal.
    public var offerType: OfferType?
    /// The offer code reference name or promotional offer identifier.
    public var offerIdentifier: String?
    /// The payment mode of that offer.
    public var offerDiscountType: OfferDiscountType?
    /// The duration of that offer as an ISO 8601 duration, e.g. `P1M`.
    public var offerPeriod: String?
    /// Win-back offers the customer is eligible for, best first.
    public var eligibleWinBackOfferIds: [String]?

    // MARK: Signature and environment

    /// When the App Store signed this payload.
    public var signedDate: Date?
    /// The environment that produced the payload.
    public var environment: AppStoreEnvironment?

    // MARK: Dates and price

    /// The earliest start of the current run of subscription periods, ignoring lapses shorter than 60 days.
    public var recentSubscriptionStartDate: Date?
    /// When the most recent purchase expires or renews.
    public var renewalDate: Date?
    /// The price of the next renewal, in milliunits of ``currency``.
    public var renewalPrice: Int64?
    /// The ISO 4217 currency code of ``renewalPrice``.
    public var currency: String?

    // MARK: Advanced Commerce and billing plans

    /// Renewal details of an Advanced Commerce API subscription.
    public var advancedCommerceInfo: AdvancedCommerceRenewalInfo?
    /// How the next renewal is billed.
    public var renewalBillingPlanType: BillingPlanType?
    /// What happens when a 12-month commitment ends.
    public var commitmentInfo: RenewalCommitmentInfo?
    /// A multiseat subscription's price tiers at the next renewal (API 1.23); ``renewalPrice`` is then per seat.
    public var multiSeatInfo: RenewalMultiSeatInfo?
    /// The seats the next renewal bills (API 1.23): reductions take effect at renewal.
    public var renewalQuantity: Int32?

    public init(
        originalTransactionId: String? = nil,
        productId: String? = nil,
        autoRenewProductId: String? = nil,
        autoRenewStatus: AutoRenewStatus? = nil,
        expirationIntent: ExpirationIntent? = nil,
        isInBillingRetryPeriod: Bool? = nil,
        gracePeriodExpiresDate: Date? = nil,
        priceIncreaseStatus: PriceIncreaseStatus? = nil,
        offerType: OfferType? = nil,
        offerIdentifier: String? = nil,
        offerDiscountType: OfferDiscountType? = nil,
        offerPeriod: String? = nil,
        signedDate: Date? = nil,
        environment: AppStoreEnvironment? = nil,
        recentSubscriptionStartDate: Date? = nil,
        renewalDate: Date? = nil,
        renewalPrice: Int64? = nil,
        currency: String? = nil,
        eligibleWinBackOfferIds: [String]? = nil,
        appAccountToken: String? = nil,
        appTransactionId: String? = nil,
        advancedCommerceInfo: AdvancedCommerceRenewalInfo? = nil,
        renewalBillingPlanType: BillingPlanType? = nil,
        commitmentInfo: RenewalCommitmentInfo? = nil,
        multiSeatInfo: RenewalMultiSeatInfo? = nil,
        renewalQuantity: Int32? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.autoRenewProductId = autoRenewProductId
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.priceIncreaseStatus = priceIncreaseStatus
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.offerDiscountType = offerDiscountType
        self.offerPeriod = offerPeriod
        self.signedDate = signedDate
        self.environment = environment
        self.recentSubscriptionStartDate = recentSubscriptionStartDate
        self.renewalDate = renewalDate
        self.renewalPrice = renewalPrice
        self.currency = currency
        self.eligibleWinBackOfferIds = eligibleWinBackOfferIds
        self.appAccountToken = appAccountToken
        self.appTransactionId = appTransactionId
        self.advancedCommerceInfo = advancedCommerceInfo
        self.renewalBillingPlanType = renewalBillingPlanType
        self.commitmentInfo = commitmentInfo
        self.multiSeatInfo = multiSeatInfo
        self.renewalQuantity = renewalQuantity
    }

    // MARK: Derived values

    /// ``appAccountToken`` parsed as a UUID (any letter case); `nil` if absent or not a UUID.
    public var appAccountTokenUUID: UUID? { appAccountToken.flatMap(UUID.init(uuidString:)) }

    /// The chain must have been valid at ``signedDate``.
    public var verificationDate: Date? { signedDate }

    /// Identity fields this payload kind always carries.
    public static let carriedIdentityFields: PayloadIdentity.Fields = [.environment]

    /// The environment only: renewal info carries no bundle identifier or `appAppleId`.
    public var claimedIdentity: PayloadIdentity { PayloadIdentity(environment: environment) }
}
