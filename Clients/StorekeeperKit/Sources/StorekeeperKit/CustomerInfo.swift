import Foundation
import StorekeeperAPI

/// What the user has, as the server last answered (`GET /v1/me`), checked against the pinned key when the app
/// configured one — or, while the server cannot be reached, as the kept answer and StoreKit say.
public struct CustomerInfo: Sendable, Hashable {
    /// Where the answer comes from.
    public enum Source: Sendable, Hashable {
        /// The server, now.
        case server
        /// The last signed answer, kept on disk and checked again with the pinned key (the server is unreachable).
        case kept
        /// The kept answer, and StoreKit confirmed on the device an entitlement it lacks (bought meanwhile).
        case keptAndStoreKit
    }

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
    public var source: Source
    /// Entitlements only StoreKit vouches for (bought while the server was away); the server has not seen them yet.
    public var confirmedByStoreKit: Set<String> = []
    /// No entitlement from the server's answer is believed after this (`asOf` + the maximum staleness).
    public var believedUntil: Date
    /// The whole answer (transactions, orders, subscriptions) for screens that need more.
    public var user: Components.Schemas.User

    init(_ user: Components.Schemas.User, verified: Bool, source: Source, offline: OfflinePolicy) {
        userId = user.userId
        isGuest = user.guest
        entitlements = Dictionary(user.entitlements.filter(\.active).map { ($0.entitlement, $0.expiresAt) }) { first, _ in first }
        wallet = user.wallet.additionalProperties
        asOf = user.asOf
        self.verified = verified
        self.source = source
        believedUntil = user.asOf.addingTimeInterval(offline.maximumStaleness)
        self.user = user
    }

    /// Whether `entitlement` is active at `now`: before its signed expiry and, for what the server granted, before
    /// ``believedUntil`` (an expiry since the answer is not assumed away; a kept answer does not last forever).
    public func isEntitled(to entitlement: String, now: Date = Date()) -> Bool {
        guard let ends = entitlements[entitlement] else { return false }
        if let ends, ends <= now { return false }
        return confirmedByStoreKit.contains(entitlement) || now < believedUntil
    }

    /// The same user with the same entitlements, balances and purchases (`asOf` and where it came from aside).
    func hasSameContent(as other: CustomerInfo) -> Bool {
        userId == other.userId && entitlements == other.entitlements && wallet == other.wallet
            && confirmedByStoreKit == other.confirmedByStoreKit && user.transactions == other.user.transactions
            && user.subscriptions == other.user.subscriptions && user.orders == other.user.orders
    }
}

/// How StorekeeperKit answers for the user while the server cannot be reached.
public struct OfflinePolicy: Sendable, Hashable {
    /// How long after the server's answer (`asOf`) its entitlements are still believed offline: 3 days by default.
    /// Each entitlement also ends at its own signed expiry, whichever comes first.
    public var maximumStaleness: TimeInterval
    /// Product id → entitlement, for purchases StoreKit reports that the kept answer does not know (bought while
    /// the server was away). Products the kept answer already names are known without it.
    public var productEntitlements: [String: String]

    public init(maximumStaleness: TimeInterval = 3 * 86_400, productEntitlements: [String: String] = [:]) {
        self.maximumStaleness = maximumStaleness
        self.productEntitlements = productEntitlements
    }
}
