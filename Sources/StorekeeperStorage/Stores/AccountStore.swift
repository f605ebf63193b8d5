import Foundation
import SQLKit
import StorekeeperCore

/// What one user has: entitlements, wallet, transactions (the read side of `/v1/me`).
public struct AccountStore: Sendable {
    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// One grant of an entitlement by one transaction.
    public struct Grant: Sendable, Hashable {
        public var entitlement: String
        public var productId: String
        public var productKind: ProductKind
        public var transactionId: String
        public var originalTransactionId: String
        public var start: Date
        public var end: Date?
        public var environment: String
        public var revokedAt: Date?
        /// Set when the grant is the user's seat on another user's multiseat subscription (Apple's claim id): the
        /// purchaser's grant, bounded by the time the seat was claimed.
        public var seatClaimId: String? = nil
    }

    /// A transaction delivered to the user.
    public struct Transaction: Sendable, Hashable {
        public var transactionId: String
        public var originalTransactionId: String
        public var productId: String
        public var productKind: ProductKind
        public var environment: String
        public var quantity: Int
        public var purchaseDate: Date
        public var expiresDate: Date?
        public var orderId: String?
        public var source: String
        public var deliveredAt: Date
        /// Price, currency, storefront, offer and revocation details, as the store reported them.
        public var commerce: TransactionCommerce
        public var store: Store
    }

    public struct Snapshot: Sendable, Hashable {
        public var user: UserID
        public var grants: [Grant]
        public var balances: [String: Int64]
        public var transactions: [Transaction]
    }

    public func snapshot(of user: UserID, transactionLimit: Int = 100) async throws -> Snapshot {
        try await provider.withSession { db in
            let grants = try await db.raw(
                """
                SELECT entitlement, product_id, product_kind, transaction_id, original_transaction_id, starts_at, ends_at,
                    environment, revoked_at
                FROM entitlement_grants WHERE user_id = \(bind: user.rawValue) ORDER BY starts_at, transaction_id
                """
            ).all().map { row in
                Grant(
                    entitlement: try row.decode(column: "entitlement", as: String.self),
                    productId: try row.decode(column: "product_id", as: String.self),
                    productKind: ProductKind(rawValue: try row.decode(column: "product_kind", as: String.self)) ?? .nonConsumable,
                    transactionId: try row.decode(column: "transaction_id", as: String.self),
                    originalTransactionId: try row.decode(column: "original_transaction_id", as: String.self),
                    start: Date(millis: try row.decode(column: "starts_at", as: Int64.self)),
                    end: try row.decode(column: "ends_at", as: Int64?.self).map(Date.init(millis:)),
                    environment: try row.decode(column: "environment", as: String.self),
                    revokedAt: try row.decode(column: "revoked_at", as: Int64?.self).map(Date.init(millis:))
                )
            }
            let seats = try await Self.seatGrants(of: [user], on: db)[user] ?? []
            var balances: [String: Int64] = [:]
            for row in try await db.raw("SELECT currency, balance FROM wallets WHERE user_id = \(bind: user.rawValue)").all() {
                balances[try row.decode(column: "currency", as: String.self)] = try row.decode(column: "balance", as: Int64.self)
            }
            let transactions = try await db.raw(
                """
                SELECT transaction_id, original_transaction_id, product_id, product_kind, environment, quantity, purchase_date,
                    expires_date, order_id, source, delivered_at, \(unsafeRaw: StoreTransactionsTable.commerceColumns)
                FROM store_transactions WHERE user_id = \(bind: user.rawValue)
                ORDER BY purchase_date DESC, transaction_id LIMIT \(bind: transactionLimit)
                """
            ).all().map { row in
                Transaction(
                    transactionId: try row.decode(column: "transaction_id", as: String.self),
                    originalTransactionId: try row.decode(column: "original_transaction_id", as: String.self),
                    productId: try row.decode(column: "product_id", as: String.self),
                    productKind: ProductKind(rawValue: try row.decode(column: "product_kind", as: String.self)) ?? .consumable,
                    environment: try row.decode(column: "environment", as: String.self),
                    quantity: Int(try row.decode(column: "quantity", as: Int64.self)),
                    purchaseDate: Date(millis: try row.decode(column: "purchase_date", as: Int64.self)),
                    expiresDate: try row.decode(column: "expires_date", as: Int64?.self).map(Date.init(millis:)),
                    orderId: try row.decode(column: "order_id", as: String?.self),
                    source: try row.decode(column: "source", as: String.self),
                    deliveredAt: Date(millis: try row.decode(column: "delivered_at", as: Int64.self)),
                    commerce: try StoreTransactionsTable.commerce(row: row),
                    store: try StoreTransactionsTable.store(row: row)
                )
            }
            return Snapshot(user: user, grants: grants + seats, balances: balances, transactions: transactions)
        }
    }

    /// Grants and balances (no transactions) of several users in two queries: the state an event carries.
    public func stateSnapshots(of users: [UserID]) async throws -> [UserID: Snapshot] {
        guard !users.isEmpty else { return [:] }
        let ids = users.map(\.rawValue)
        return try await provider.withSession { db in
            var snapshots = Dictionary(uniqueKeysWithValues: users.map { ($0, Snapshot(user: $0, grants: [], balances: [:], transactions: [])) })
            for row in try await db.raw(
                """
                SELECT user_id, entitlement, product_id, product_kind, transaction_id, original_transaction_id, starts_at, ends_at,
                    environment, revoked_at
                FROM entitlement_grants WHERE user_id IN (\(binds: ids)) ORDER BY starts_at, transaction_id
                """
            ).all() {
                let user = UserID(rawValue: try row.decode(column: "user_id", as: String.self))
                snapshots[user]?.grants.append(
                    Grant(
                        entitlement: try row.decode(column: "entitlement", as: String.self),
                        productId: try row.decode(column: "product_id", as: String.self),
                        productKind: ProductKind(rawValue: try row.decode(column: "product_kind", as: String.self)) ?? .nonConsumable,
                        transactionId: try row.decode(column: "transaction_id", as: String.self),
                        originalTransactionId: try row.decode(column: "original_transaction_id", as: String.self),
                        start: Date(millis: try row.decode(column: "starts_at", as: Int64.self)),
                        end: try row.decode(column: "ends_at", as: Int64?.self).map(Date.init(millis:)),
                        environment: try row.decode(column: "environment", as: String.self),
                        revokedAt: try row.decode(column: "revoked_at", as: Int64?.self).map(Date.init(millis:))
                    )
                )
            }
            for (user, grants) in try await Self.seatGrants(of: users, on: db) { snapshots[user]?.grants.append(contentsOf: grants) }
            for row in try await db.raw("SELECT user_id, currency, balance FROM wallets WHERE user_id IN (\(binds: ids))").all() {
                let user = UserID(rawValue: try row.decode(column: "user_id", as: String.self))
                snapshots[user]?.balances[try row.decode(column: "currency", as: String.self)] = try row.decode(column: "balance", as: Int64.self)
            }
            return snapshots
        }
    }

    /// The grants `users` hold through seats on other users' multiseat subscriptions: each of the subscription's
    /// grants, bounded by the time the seat was claimed and released (so a member's access follows the purchaser's
    /// renewals, refunds and expiry, and ends with the seat).
    static func seatGrants(of users: [UserID], on db: any SQLDatabase) async throws -> [UserID: [Grant]] {
        guard !users.isEmpty else { return [:] }
        var grants: [UserID: [Grant]] = [:]
        for row in try await db.raw(
            """
            SELECT s.member_id, s.seat_claim_id, s.claimed_at, s.released_at, g.entitlement, g.product_id, g.product_kind,
                g.transaction_id, g.original_transaction_id, g.starts_at, g.ends_at, g.environment, g.revoked_at
            FROM team_seats s JOIN entitlement_grants g ON g.original_transaction_id = s.original_transaction_id
            WHERE s.member_id IN (\(binds: Set(users).sorted().map(\.rawValue))) AND s.claimed_at IS NOT NULL
                AND s.status IN ('claimed', 'released') AND (g.ends_at IS NULL OR g.ends_at > s.claimed_at)
                AND (s.released_at IS NULL OR g.starts_at < s.released_at)
            ORDER BY g.starts_at, g.transaction_id
            """
        ).all() {
            let claimed = Date(millis: try row.decode(column: "claimed_at", as: Int64.self))
            let released = try row.decode(column: "released_at", as: Int64?.self).map(Date.init(millis:))
            let start = max(Date(millis: try row.decode(column: "starts_at", as: Int64.self)), claimed)
            var end = try row.decode(column: "ends_at", as: Int64?.self).map(Date.init(millis:))
            if let released { end = min(end ?? released, released) }
            let user = UserID(rawValue: try row.decode(column: "member_id", as: String.self))
            grants[user, default: []].append(
                Grant(
                    entitlement: try row.decode(column: "entitlement", as: String.self),
                    productId: try row.decode(column: "product_id", as: String.self),
                    productKind: ProductKind(rawValue: try row.decode(column: "product_kind", as: String.self)) ?? .autoRenewable,
                    transactionId: try row.decode(column: "transaction_id", as: String.self),
                    originalTransactionId: try row.decode(column: "original_transaction_id", as: String.self),
                    start: start,
                    end: end,
                    environment: try row.decode(column: "environment", as: String.self),
                    revokedAt: try row.decode(column: "revoked_at", as: Int64?.self).map(Date.init(millis:)),
                    seatClaimId: try row.decode(column: "seat_claim_id", as: String?.self)
                )
            )
        }
        return grants
    }

    /// Whether `user` ever had an introductory offer (a trial or intro price) in `group`, under any Apple ID.
    public func hadIntroductoryOffer(_ user: UserID, group: String) async throws -> Bool {
        try await provider.withSession { db in
            try await db.raw(
                """
                SELECT transaction_id FROM store_transactions
                WHERE user_id = \(bind: user.rawValue) AND subscription_group = \(bind: group) AND offer_type = 1 LIMIT 1
                """
            ).first() != nil
        }
    }

    /// The subscription groups the user has had a subscription in (current or lapsed), and those in which they had
    /// an introductory offer: one read for a paywall.
    public func subscriptionHistory(_ user: UserID) async throws -> (subscribed: Set<String>, hadIntroductoryOffer: Set<String>) {
        try await provider.withSession { db in
            var subscribed = Set<String>()
            var introductory = Set<String>()
            for row in try await db.raw(
                """
                SELECT subscription_group, MAX(CASE WHEN offer_type = 1 THEN 1 ELSE 0 END) AS introductory
                FROM store_transactions WHERE user_id = \(bind: user.rawValue) AND subscription_group IS NOT NULL
                GROUP BY subscription_group
                """
            ).all() {
                let group = try row.decode(column: "subscription_group", as: String.self)
                subscribed.insert(group)
                if try row.decode(column: "introductory", as: Int.self) == 1 { introductory.insert(group) }
            }
            return (subscribed, introductory)
        }
    }

    /// Whether the user row exists (has ever been seen).
    public func exists(_ user: UserID) async throws -> Bool {
        try await provider.withSession { db in
            try await db.raw("SELECT id FROM users WHERE id = \(bind: user.rawValue)").first() != nil
        }
    }
}
