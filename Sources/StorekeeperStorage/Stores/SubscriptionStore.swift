import Foundation
import SQLKit
import StorekeeperCore

/// Reads subscription state (admin API, `/v1/me`) and picks subscriptions for the renewal sweep.
public struct SubscriptionStore: Sendable {
    /// One subscription as Storekeeper follows it.
    public struct Record: Sendable, Hashable {
        public var originalTransactionId: String
        public var user: UserID?
        public var bundleId: String
        public var productId: String
        public var subscriptionGroup: String?
        public var environment: String
        public var state: SubscriptionState
        public var expirationReason: String?
        public var autoRenew: Bool?
        public var autoRenewProductId: String?
        public var expiresAt: Date?
        public var gracePeriodExpiresAt: Date?
        public var offerType: Int?
        public var offerId: String?
        public var priceIncrease: String?
        public var latestTransactionId: String?
        /// `MONTHLY` or `BILLED_UPFRONT`, when Apple said.
        public var billingPlan: String?
        public var commitment: SubscriptionCommitment?
        public var lastEvent: String
        public var lastSignedDate: Date
        public var checkedAt: Date?
        public var updatedAt: Date

        init(row: any SQLRow) throws {
            originalTransactionId = try row.decode(column: "original_transaction_id", as: String.self)
            user = try row.decode(column: "user_id", as: String?.self).map(UserID.init(rawValue:))
            bundleId = try row.decode(column: "bundle_id", as: String.self)
            productId = try row.decode(column: "product_id", as: String.self)
            subscriptionGroup = try row.decode(column: "subscription_group", as: String?.self)
            environment = try row.decode(column: "environment", as: String.self)
            state = SubscriptionState(rawValue: try row.decode(column: "state", as: String.self)) ?? .expired
            expirationReason = try row.decode(column: "expiration_reason", as: String?.self)
            autoRenew = try row.decode(column: "auto_renew", as: Int64?.self).map { $0 != 0 }
            autoRenewProductId = try row.decode(column: "auto_renew_product_id", as: String?.self)
            expiresAt = try row.decode(column: "expires_at", as: Int64?.self).map(Date.init(millis:))
            gracePeriodExpiresAt = try row.decode(column: "grace_expires_at", as: Int64?.self).map(Date.init(millis:))
            offerType = try row.decode(column: "offer_type", as: Int64?.self).map(Int.init)
            offerId = try row.decode(column: "offer_id", as: String?.self)
            priceIncrease = try row.decode(column: "price_increase", as: String?.self)
            latestTransactionId = try row.decode(column: "latest_transaction_id", as: String?.self)
            billingPlan = try row.decode(column: "billing_plan", as: String?.self)
            commitment = try SubscriptionsTable.commitment(row: row)
            lastEvent = try row.decode(column: "last_event", as: String.self)
            lastSignedDate = Date(millis: try row.decode(column: "last_signed_date", as: Int64.self))
            checkedAt = try row.decode(column: "checked_at", as: Int64?.self).map(Date.init(millis:))
            updatedAt = Date(millis: try row.decode(column: "updated_at", as: Int64.self))
        }
    }

    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    public func find(_ originalTransactionId: String) async throws -> Record? {
        try await provider.withSession { db in
            try await db.raw("SELECT * FROM subscriptions WHERE original_transaction_id = \(bind: originalTransactionId)")
                .first().map(Record.init(row:))
        }
    }

    /// A user's subscriptions, newest change first.
    public func subscriptions(of user: UserID) async throws -> [Record] {
        try await provider.withSession { db in
            try await db.raw(
                "SELECT * FROM subscriptions WHERE user_id = \(bind: user.rawValue) ORDER BY updated_at DESC, original_transaction_id"
            ).all().map(Record.init(row:))
        }
    }

    /// The subscriptions of several users in one query, each user's newest change first.
    public func subscriptions(ofUsers users: [UserID]) async throws -> [UserID: [Record]] {
        guard !users.isEmpty else { return [:] }
        return try await provider.withSession { db in
            var found: [UserID: [Record]] = [:]
            for record in try await db.raw(
                """
                SELECT * FROM subscriptions WHERE user_id IN (\(binds: users.map(\.rawValue)))
                ORDER BY updated_at DESC, original_transaction_id
                """
            ).all().map(Record.init(row:)) {
                if let user = record.user { found[user, default: []].append(record) }
            }
            return found
        }
    }

    /// Subscriptions whose state may be stale: expiring within `horizon` (or already past expiry) with no check
    /// since `recheckAfter`, and billing-retry or grace subscriptions not checked for `retryRecheck`.
    public func dueForCheck(
        now: Date,
        horizon: TimeInterval = 86_400,
        recheckAfter: TimeInterval = 3_600,
        retryRecheck: TimeInterval = 6 * 3_600,
        limit: Int = 100
    ) async throws -> [Record] {
        try await provider.withSession { db in
            try await db.raw(
                """
                SELECT * FROM subscriptions
                WHERE store = 'app_store' AND ((state IN ('active', 'grace_period') AND expires_at < \(bind: now.addingTimeInterval(horizon).millis)
                       AND (checked_at IS NULL OR checked_at < \(bind: now.addingTimeInterval(-recheckAfter).millis)))
                   OR (state IN ('billing_retry', 'grace_period')
                       AND (checked_at IS NULL OR checked_at < \(bind: now.addingTimeInterval(-retryRecheck).millis))))
                ORDER BY expires_at LIMIT \(bind: limit)
                """
            ).all().map(Record.init(row:))
        }
    }

    /// The latest legacy receipt that proved this subscription, if a client ever sent one.
    public func latestReceipt(_ originalTransactionId: String) async throws -> String? {
        try await provider.withSession { db in
            try await db.raw(
                "SELECT receipt FROM subscription_receipts WHERE original_transaction_id = \(bind: originalTransactionId)"
            ).first()?.decode(column: "receipt", as: String.self)
        }
    }
}
