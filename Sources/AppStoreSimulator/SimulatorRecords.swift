import AppStoreWire
import Foundation

/// A sandbox tester (Apple ID) known to the simulator.
public struct SimulatedAccount: Sendable, Hashable, Codable {
    public let id: String
    /// The app-download transaction id (`appTransactionId`) of this account's copy of the app.
    public let appTransactionId: String
    public var storefront: String
    /// When true, every charge fails (a declined card) until cleared.
    public var billingFails: Bool
    /// Subscription groups whose introductory offer this account has used.
    public var introductoryOfferGroupsUsed: Set<String>
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
    /// Pay-as-you-go periods still to be charged at the offer price.
    var discountedPeriodsLeft: Int
    var offer: SimulatorCatalog.Offer?
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
