import Foundation

/// One transaction after its store vouched for it (the App Store: Apple's signature, JWS, or `verifyReceipt`): the
/// only input that may credit anything (invariant 3).
public struct VerifiedTransaction: Sendable, Hashable {
    public enum Source: String, Sendable, Hashable, Codable {
        case signedTransaction
        case receipt
        case restore
        /// The store's server API answered for it (Google Play's purchase tokens).
        case storeAPI
    }

    public var store: Store = .appStore
    public var transactionId: String
    public var originalTransactionId: String
    public var bundleId: String
    public var productId: String
    public var environment: StoreEnvironment
    public var purchaseDate: Date
    public var expiresDate: Date?
    public var quantity: Int
    public var appAccountToken: UUID?
    /// The offer that priced it, if any.
    public var offerType: OfferKind?
    public var subscriptionGroup: String?
    public var revocationDate: Date?
    public var source: Source
    /// The JWS as Apple signed it, kept for audits (nil for receipt entries).
    public var signedData: String?
    /// Price, currency, storefront, offer and revocation details.
    public var commerce: TransactionCommerce
    /// Google Play's purchase token: one per purchase, kept by a subscription's renewals, new with each change of
    /// plan (nil for the App Store).
    public var purchaseToken: String?
    /// What the store must be told once this transaction is delivered (nil: nothing).
    public var acknowledgement: StoreAcknowledgement?

    public init(
        transactionId: String,
        originalTransactionId: String,
        bundleId: String,
        productId: String,
        environment: StoreEnvironment,
        purchaseDate: Date,
        expiresDate: Date? = nil,
        quantity: Int = 1,
        appAccountToken: UUID? = nil,
        offerType: OfferKind? = nil,
        subscriptionGroup: String? = nil,
        revocationDate: Date? = nil,
        source: Source,
        signedData: String? = nil,
        commerce: TransactionCommerce = TransactionCommerce()
    ) {
        self.commerce = commerce
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.bundleId = bundleId
        self.productId = productId
        self.environment = environment
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.quantity = quantity
        self.appAccountToken = appAccountToken
        self.offerType = offerType
        self.subscriptionGroup = subscriptionGroup
        self.revocationDate = revocationDate
        self.source = source
        self.signedData = signedData
    }

    public var isSandbox: Bool { !environment.isProduction }
    public var isIntroductoryOffer: Bool { offerType == .introductory }
}
