import Foundation

/// The record of one transaction delivered to a user, as the client and the admin API see it.
public struct Delivery: Sendable, Hashable {
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var productKind: ProductKind
    public var user: UserID
    public var environment: StoreEnvironment
    public var orderId: String?
    /// `false` when this request found it already delivered (safe to finish the transaction again).
    public var newlyDelivered: Bool
    /// What it gave; `nil` when already delivered and not re-read.
    public var grant: DeliveryGrant?
    /// Set when the transfer policy moved it here from another user.
    public var transferredFrom: UserID?
    /// Risks noticed while delivering (`introductory_offer_repeated`): delivered all the same, audited and counted.
    public var riskFlags: [String] = []

    public init(
        transactionId: String,
        originalTransactionId: String,
        productId: String,
        productKind: ProductKind,
        user: UserID,
        environment: StoreEnvironment,
        orderId: String?,
        newlyDelivered: Bool,
        grant: DeliveryGrant?,
        transferredFrom: UserID? = nil,
        riskFlags: [String] = []
    ) {
        self.riskFlags = riskFlags
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.productKind = productKind
        self.user = user
        self.environment = environment
        self.orderId = orderId
        self.newlyDelivered = newlyDelivered
        self.grant = grant
        self.transferredFrom = transferredFrom
    }

    public var isSandbox: Bool { !environment.isProduction }
}

/// What happened to one submitted transaction in the store.
public enum DeliveryResult: Sendable, Hashable {
    case delivered(Delivery)
    /// Bound to another user and the policy refused the submitter; delivered to its owner if it was new.
    case ownedByAnotherUser(transactionId: String)
    /// No user could be determined: kept on the pending-recovery list.
    case parked(transactionId: String)
}
