import Foundation

/// An order's life: created → delivered, or cancelled / expired. A cancelled or expired order is still delivered
/// when Apple later reports it paid (the cancel-then-success callback of seed 000).
public enum OrderStatus: String, Sendable, Hashable, Codable {
    case created
    case delivered
    case cancelled
    case expired
}

/// An order the app created before StoreKit's purchase sheet: it ties the purchase to a user by `appAccountToken`.
public struct Order: Sendable, Hashable {
    public var id: String
    public var user: UserID
    public var bundleId: String
    public var productId: String
    public var appAccountToken: UUID
    public var status: OrderStatus
    public var createdAt: Date
    public var expiresAt: Date
    public var transactionId: String?

    public init(
        id: String,
        user: UserID,
        bundleId: String,
        productId: String,
        appAccountToken: UUID,
        status: OrderStatus,
        createdAt: Date,
        expiresAt: Date,
        transactionId: String?
    ) {
        self.id = id
        self.user = user
        self.bundleId = bundleId
        self.productId = productId
        self.appAccountToken = appAccountToken
        self.status = status
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.transactionId = transactionId
    }

    /// The status as of `now`: a created order past its expiry reads as expired.
    public func status(at now: Date) -> OrderStatus {
        status == .created && now >= expiresAt ? .expired : status
    }
}
