import AppStoreWire
import Foundation

/// A sandbox tester (Apple ID) known to the simulator.
public struct SimulatedAccount: Sendable, Hashable, Codable {
    public let id: String
    /// The app-download transaction id (`appTransactionId`) of this account's copy of the app.
    public let appTransactionId: String
    /// When the account first got the app (created here at account creation): the app transaction's
    /// `originalPurchaseDate`, the same on every call.
    public let originalAppPurchaseDate: Date
    public var storefront: String
    /// When true, every charge fails (a declined card) until cleared.
    public var billingFails: Bool
    /// Subscription groups whose introductory offer this account has used.
    public var introductoryOfferGroupsUsed: Set<String>
    /// The family-sharing group the account belongs to, if any.
    public var familyId: String?
}

/// Where an auto-renewable subscription stands, as Apple's status codes describe it.
public enum SimulatedSubscriptionState: String, Sendable, Hashable, Codable {
    case active, billingRetry, gracePeriod, expired, revoked

    var status: SubscriptionStatus {
        switch self {
        case .active: .active
        case .billingRetry: .billingRetry
        case .gracePeriod: .billingGracePeriod
        case .expired: .expired
        case .revoked: .revoked
        }
    }
}

/// One subscription (per account and group), keyed by its original transaction id.
struct SubscriptionRecord: Sendable {
    let originalTransactionId: String
    let accountId: String
    let groupId: String
    var productId: String
    var autoRenewProductId: String
    var autoRenew: Bool
    var state: SimulatedSubscriptionState
    var expiresDate: Date
    var latestTransactionId: String
    var appAccountToken: String?
    var expirationIntent: ExpirationIntent?
    var billingRetryStart: Date?
    var nextBillingCheck: Date?
    var graceExpires: Date?
    var renewals: Int
    /// Discounted periods still to be charged at the offer price after the current one.
    var discountedPeriodsLeft: Int
    var offer: SimulatorCatalog.Offer?
    var offerType: OfferType?
    /// The offer came with a pending downgrade or crossgrade, so cancelling that change withdraws it too.
    var offerIsForPendingChange = false
    /// A price increase the customer has not yet agreed to (the subscription expires at renewal without consent).
    var priceIncreasePending: Bool = false
    var priceIncreaseAccepted: Bool = false
    /// Renewal-date extensions granted (date granted), at most two per 365 days.
    var extensions: [Date] = []
    /// For a family member's copy: the purchaser's original transaction id.
    var sharedFrom: String?
    /// Start of the most recent run of continuous service (lapses of up to 60 days do not break a run): the
    /// renewal info's `recentSubscriptionStartDate`.
    var recentStart: Date?
    /// A monthly billing plan's 12-month commitment, while the subscription is billed that way.
    var commitment: Commitment?
    /// The date whose day of the month renewals in months or years land on (the start of the current billing
    /// cycle); nil while the cycle is in days or weeks, or after the renewal date moved (an extension).
    var billingAnchor: Date?
    /// A multiseat subscription's seats at the next renewal (a seat refund lowers it; the current period keeps its
    /// count); nil for a subscription of one.
    var seats: Int?
    /// For a member's copy of an APPLE-hosted multiseat subscription: the purchaser's original transaction id (the
    /// copy renews while the purchaser's subscription does).
    var groupPurchase: String?
}

/// A 12-month commitment paid monthly: which payment the current period is, and when the commitment ends.
struct Commitment: Sendable, Hashable {
    var periodNumber: Int
    let totalPeriods: Int
    let expires: Date
    let monthlyPrice: Int64
    var totalPrice: Int64 { monthlyPrice * Int64(totalPeriods) }
}

/// A notification the simulated App Store sent (or would send) to the developer.
public struct SimulatedNotification: Sendable, Hashable {
    public let payload: ResponseBodyV2DecodedPayload
    /// The exact `signedPayload` JWS.
    public let signedPayload: String

    public var notificationUUID: String { payload.notificationUUID ?? "" }
    public var type: NotificationTypeV2 { payload.notificationType }
    public var subtype: Subtype? { payload.subtype }
}

/// The answer to a device purchase: the StoreKit 2 signed transaction, or a pending Ask to Buy.
public struct SimulatedPurchase: Sendable, Hashable {
    public let transaction: JWSTransactionDecodedPayload
    public let signedTransaction: String
}
