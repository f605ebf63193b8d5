import Foundation

/// The decoded payload of a `signedTransactionInfo` JWS: one in-app purchase, renewal or restore.
///
/// Every field is optional because Apple omits fields that do not apply (and adds new ones over time).
/// Dates are epoch milliseconds on the wire; decode with ``AppStoreJSON/makeDecoder()``.
public struct JWSTransactionDecodedPayload: AppStoreSignedPayload, Codable, Sendable, Hashable {
    // MARK: Identifiers

    /// The unique identifier of this transaction (purchase, restore or renewal).
    public var transactionId: String?
    /// The transaction identifier of the original purchase; stable across renewals and restores.
    public var originalTransactionId: String?
    /// The identifier of a subscription purchase event across devices, including renewals.
    public var webOrderLineItemId: String?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The product identifier from App Store Connect.
    public var productId: String?
    /// The identifier of the subscription group the product belongs to (subscriptions only).
    public var subscriptionGroupIdentifier: String?
    /// The app-download transaction identifier (App Store Server API 1.15).
    public var appTransactionId: String?
    /// The original transaction identifier before a migration (Advanced Commerce).
    public var previousOriginalTransactionId: String?

    // MARK: Dates

    /// When the App Store charged the customer (purchase, restore, renewal or resubscription).
    public var purchaseDate: Date?
    /// The purchase date of the original transaction.
    public var originalPurchaseDate: Date?
    /// When an auto-renewable subscription expires or renews.
    public var expiresDate: Date?
    /// When the App Store signed this payload.
    public var signedDate: Date?

    // MARK: Product and purchase

    /// The number of consumables purchased.
    public var quantity: Int32?
    /// The kind of in-app purchase.
    public var type: ProductType?
    /// The token the app set when purchasing, as Apple sent it (normally a UUID; see ``appAccountTokenUUID``).
    public var appAccountToken: String?
    /// Whether the customer bought the product or has it through Family Sharing.
    public var inAppOwnershipType: InAppOwnershipType?
    /// Whether the customer upgraded to another subscription, so this one ended early.
    public var isUpgraded: Bool?
    /// Whether the customer purchased or the App Store renewed.
    public var transactionReason: TransactionReason?

    // MARK: Revocation

    /// Why the transaction was refunded or revoked.
    public var revocationReason: RevocationReason?
    /// When the transaction was refunded or revoked.
    public var revocationDate: Date?
    /// How the transaction was revoked (App Store Server API 1.19).
    public var revocationType: RevocationType?
    /// The refunded share, in milliunits of a percent (50000 = 50 %), for prorated refunds.
    public var revocationPercentage: Int32?

    // MARK: Offer

    /// The kind of offer applied to this transaction.
    public var offerType: OfferType?
    /// The offer code reference name or promotional offer identifier.
    public var offerIdentifier: String?
    /// The payment mode of the offer.
    public var offerDiscountType: OfferDiscountType?
    /// The duration of the offer as an ISO 8601 duration, e.g. `P1M`.
    public var offerPeriod: String?

    // MARK: Storefront and price

    /// The environment that produced the transaction.
    public var environment: AppStoreEnvironment?
    /// The storefront country code, ISO 3166-1 alpha-3 (e.g. `USA`).
    public var storefront: String?
    /// Apple's identifier of the storefront (e.g. `143441`).
    public var storefrontId: String?
    /// The price in milliunits of ``currency`` ($1.99 → 1990); informational, not for accounting.
    public var price: Int64?
    /// The ISO 4217 currency code of ``price``.
    public var currency: String?

    // MARK: Advanced Commerce and billing plans

    /// Details of an Advanced Commerce API purchase.
    public var advancedCommerceInfo: AdvancedCommerceTransactionInfo?
    /// How the subscription is billed (App Store Server API 1.21).
    public var billingPlanType: BillingPlanType?
    /// Progress through a monthly plan with a 12-month commitment.
    public var commitmentInfo: CommitmentInfo?

    // MARK: Multiseat

    /// A multiseat subscription's seats: invitation management, price tiers, refunded seats (API 1.23). With it,
    /// ``quantity`` is the seat count and ``price`` the average per seat.
    public var multiSeatInfo: TransactionMultiSeatInfo?
    /// `SEAT_ADDITION` on every transaction of a period in which seats were added (API 1.23).
    public var additionalTransactionReason: AdditionalTransactionReason?

    public init(
        transactionId: String? = nil,
        originalTransactionId: String? = nil,
        webOrderLineItemId: String? = nil,
        bundleId: String? = nil,
        productId: String? = nil,
        subscriptionGroupIdentifier: String? = nil,
        purchaseDate: Date? = nil,
        originalPurchaseDate: Date? = nil,
        expiresDate: Date? = nil,
        quantity: Int32? = nil,
        type: ProductType? = nil,
        appAccountToken: String? = nil,
        inAppOwnershipType: InAppOwnershipType? = nil,
        signedDate: Date? = nil,
        revocationReason: RevocationReason? = nil,
        revocationDate: Date? = nil,
        revocationType: RevocationType? = nil,
        revocationPercentage: Int32? = nil,
        isUpgraded: Bool? = nil,
        offerType: OfferType? = nil,
        offerIdentifier: String? = nil,
        offerDiscountType: OfferDiscountType? = nil,
        offerPeriod: String? = nil,
        environment: AppStoreEnvironment? = nil,
        storefront: String? = nil,
        storefrontId: String? = nil,
        transactionReason: TransactionReason? = nil,
        price: Int64? = nil,
        currency: String? = nil,
        appTransactionId: String? = nil,
        previousOriginalTransactionId: String? = nil,
        advancedCommerceInfo: AdvancedCommerceTransactionInfo? = nil,
        billingPlanType: BillingPlanType? = nil,
        commitmentInfo: CommitmentInfo? = nil,
        multiSeatInfo: TransactionMultiSeatInfo? = nil,
        additionalTransactionReason: AdditionalTransactionReason? = nil
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.bundleId = bundleId
        self.productId = productId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.quantity = quantity
        self.type = type
        self.appAccountToken = appAccountToken
        self.inAppOwnershipType = inAppOwnershipType
        self.signedDate = signedDate
        self.revocationReason = revocationReason
        self.revocationDate = revocationDate
        self.revocationType = revocationType
        self.revocationPercentage = revocationPercentage
        self.isUpgraded = isUpgraded
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.offerDiscountType = offerDiscountType
        self.offerPeriod = offerPeriod
        self.environment = environment
        self.storefront = storefront
        self.storefrontId = storefrontId
        self.transactionReason = transactionReason
        self.price = price
        self.currency = currency
        self.appTransactionId = appTransactionId
        self.previousOriginalTransactionId = previousOriginalTransactionId
        self.advancedCommerceInfo = advancedCommerceInfo
        self.billingPlanType = billingPlanType
        self.commitmentInfo = commitmentInfo
        self.multiSeatInfo = multiSeatInfo
        self.additionalTransactionReason = additionalTransactionReason
    }

    // MARK: Derived values

    /// ``appAccountToken`` parsed as a UUID (any letter case); `nil` if absent or not a UUID.
    public var appAccountTokenUUID: UUID? { appAccountToken.flatMap(UUID.init(uuidString:)) }

    /// The chain must have been valid at ``signedDate``.
    public var verificationDate: Date? { signedDate }

    /// Identity fields this payload kind always carries.
    public static let carriedIdentityFields: PayloadIdentity.Fields = [.bundleId, .environment]

    /// The bundle identifier and environment; a transaction carries no `appAppleId`.
    public var claimedIdentity: PayloadIdentity { PayloadIdentity(bundleId: bundleId, environment: environment) }
}
