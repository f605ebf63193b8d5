import Foundation
import StorekeeperAPI

/// What the user has, as the server last answered (`GET /v1/me`), checked against the pinned key when the app
/// configured one.
public struct CustomerInfo: Sendable, Hashable {
    public var userId: String
    public var isGuest: Bool
    /// Active entitlements and when each ends (`nil`: it does not expire, a non-consumable's).
    public var entitlements: [String: Date?]
    /// Wallet balances by currency (`coins`, ...).
    public var wallet: [String: Int64]
    /// The server's clock when it answered.
    public var asOf: Date
    /// Whether the answer's signature was checked against the pinned key.
    public var verified: Bool
    /// The whole answer (transactions, orders, subscriptions) for screens that need more.
    public var user: Components.Schemas.User

    init(_ user: Components.Schemas.User, verified: Bool) {
        userId = user.userId
        isGuest = user.guest
        entitlements = Dictionary(user.entitlements.filter(\.active).map { ($0.entitlement, $0.expiresAt) }) { first, _ in first }
        wallet = user.wallet.additionalProperties
        asOf = user.asOf
        self.verified = verified
        self.user = user
    }

    /// Whether `entitlement` is active (as of the answer; an expiry since then is not assumed away).
    public func isEntitled(to entitlement: String, now: Date = Date()) -> Bool {
        guard let ends = entitlements[entitlement] else { return false }
        return ends.map { $0 > now } ?? true
    }
}
