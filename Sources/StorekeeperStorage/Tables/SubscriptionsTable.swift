import Foundation
import SQLKit
import StorekeeperCore

/// `subscriptions`: where each subscription (one original transaction) stands, merged message by message in
/// Apple's `signedDate` order.
public enum SubscriptionsTable {
    /// The stored subscriptions of `originals`, locked for the rest of the transaction on PostgreSQL.
    public static func find(
        _ originals: [String],
        lock: Bool,
        kind: DatabaseKind,
        on db: any SQLDatabase
    ) async throws
        -> [String: SubscriptionSnapshot]
    {
        guard !originals.isEmpty else { return [:] }
        let suffix: SQLQueryString = lock && kind == .postgres ? " ORDER BY original_transaction_id FOR UPDATE" : ""
        var stored: [String: SubscriptionSnapshot] = [:]
        for row in try await db.raw(
            "SELECT * FROM subscriptions WHERE original_transaction_id IN (\(binds: originals))" + suffix
        ).all() {
            let snapshot = try snapshot(row: row)
            stored[snapshot.originalTransactionId] = snapshot
        }
        return stored
    }

    /// Inserts or replaces the rows (the whole merged state of each subscription).
    public static func upsert(_ rows: [(snapshot: SubscriptionSnapshot, user: UserID?)], now: Date, on db: any SQLDatabase) async throws {
        guard !rows.isEmpty else { return }
        let updated = [
            "user_id", "product_id", "subscription_group", "environment", "state", "expiration_reason", "auto_renew",
            "auto_renew_product_id", "expires_at", "grace_expires_at", "offer_type", "offer_id", "price_increase",
            "latest_transaction_id", "last_event", "last_signed_date", "updated_at", "billing_plan", "commitment_payments",
            "commitment_total", "commitment_ends_at", "commitment_price", "commitment_renews",
        ]
        var insert = BulkInsert(
            into: "subscriptions",
            columns: [
                "original_transaction_id", "user_id", "bundle_id", "product_id", "subscription_group", "environment", "state",
                "expiration_reason", "auto_renew", "auto_renew_product_id", "expires_at", "grace_expires_at", "offer_type",
                "offer_id", "price_increase", "latest_transaction_id", "last_event", "last_signed_date", "updated_at",
                "billing_plan", "commitment_payments", "commitment_total", "commitment_ends_at", "commitment_price",
                "commitment_renews", "store",
            ],
            suffix: "ON CONFLICT (original_transaction_id) DO UPDATE SET "
                + updated.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        )
        for (s, user) in rows.sorted(by: { $0.snapshot.originalTransactionId < $1.snapshot.originalTransactionId }) {
            insert.values([
                s.originalTransactionId, user?.rawValue, s.bundleId, s.productId, s.subscriptionGroup, s.environment.rawValue,
                (s.state ?? .active).rawValue, s.expirationReason, s.autoRenew.map { $0 ? 1 : 0 }, s.autoRenewProductId,
                s.expiresAt?.millis, s.gracePeriodExpiresAt?.millis, s.offerType?.rawValue, s.offerId, s.priceIncrease,
                s.latestTransactionId, s.event, s.signedDate.millis, now.millis, s.billingPlan,
                s.commitment.map { Int64($0.paymentsMade) }, s.commitment.map { Int64($0.paymentsTotal) },
                s.commitment?.endsAt?.millis, s.commitment?.price, s.commitment?.renewsAfterCommitment.map { $0 ? 1 : 0 },
                s.store.rawValue,
            ])
        }
        try await insert.run(on: db)
    }

    /// Records that Apple was asked about the subscription at `now`.
    public static func markChecked(_ original: String, now: Date, on db: any SQLDatabase) async throws {
        try await db.raw(
            "UPDATE subscriptions SET checked_at = \(bind: now.millis) WHERE original_transaction_id = \(bind: original)"
        ).run()
    }

    /// The commitment columns of a `subscriptions` row.
    public static func commitment(row: any SQLRow) throws -> SubscriptionCommitment? {
        guard let made = try row.decode(column: "commitment_payments", as: Int64?.self),
            let total = try row.decode(column: "commitment_total", as: Int64?.self)
        else { return nil }
        return SubscriptionCommitment(
            paymentsMade: Int(made),
            paymentsTotal: Int(total),
            endsAt: try row.decode(column: "commitment_ends_at", as: Int64?.self).map(Date.init(millis:)),
            price: try row.decode(column: "commitment_price", as: Int64?.self),
            renewsAfterCommitment: try row.decode(column: "commitment_renews", as: Int64?.self).map { $0 != 0 }
        )
    }

    static func snapshot(row: any SQLRow) throws -> SubscriptionSnapshot {
        SubscriptionSnapshot(
            originalTransactionId: try row.decode(column: "original_transaction_id", as: String.self),
            bundleId: try row.decode(column: "bundle_id", as: String.self),
            productId: try row.decode(column: "product_id", as: String.self),
            subscriptionGroup: try row.decode(column: "subscription_group", as: String?.self),
            environment: StoreEnvironment(storeName: try row.decode(column: "environment", as: String.self)),
            state: SubscriptionState(rawValue: try row.decode(column: "state", as: String.self)),
            expirationReason: try row.decode(column: "expiration_reason", as: String?.self),
            autoRenew: try row.decode(column: "auto_renew", as: Int64?.self).map { $0 != 0 },
            autoRenewProductId: try row.decode(column: "auto_renew_product_id", as: String?.self),
            expiresAt: try row.decode(column: "expires_at", as: Int64?.self).map(Date.init(millis:)),
            gracePeriodExpiresAt: try row.decode(column: "grace_expires_at", as: Int64?.self).map(Date.init(millis:)),
            offerType: try row.decode(column: "offer_type", as: Int64?.self).map { OfferKind(rawValue: Int($0)) },
            offerId: try row.decode(column: "offer_id", as: String?.self),
            priceIncrease: try row.decode(column: "price_increase", as: String?.self),
            latestTransactionId: try row.decode(column: "latest_transaction_id", as: String?.self),
            billingPlan: try row.decode(column: "billing_plan", as: String?.self),
            commitment: try commitment(row: row),
            event: try row.decode(column: "last_event", as: String.self),
            signedDate: Date(millis: try row.decode(column: "last_signed_date", as: Int64.self))
        )
    }
}
