import Foundation
import SQLKit
import StorekeeperCore

/// The analytics rollups' writes: the queue of changed subscriptions (filled by migration 030's triggers in the
/// transaction of each change; refilled here for a rebuild), each subscription's last rolled-up facts, and the daily
/// and cohort cells they add. Only ``AnalyticsStore``'s refresh and rebuild call it; the tables are derived from the
/// ledger's records and hold nothing of their own.
public enum AnalyticsRollupTables {
    /// Up to `limit` queued changes, oldest first: (queue id, original transaction id).
    static func queued(limit: Int, on db: any SQLDatabase) async throws -> [(Int64, String)] {
        try await db.raw("SELECT id, original_transaction_id FROM analytics_dirty ORDER BY id LIMIT \(bind: max(1, min(limit, 5_000)))")
            .all().map { (try $0.decode(column: "id", as: Int64.self), try $0.decode(column: "original_transaction_id", as: String.self)) }
    }

    static func queuedCount(on db: any SQLDatabase) async throws -> Int {
        Int(try await db.raw("SELECT COUNT(*) AS n FROM analytics_dirty").all().first?.decode(column: "n", as: Int64.self) ?? 0)
    }

    /// Takes handled changes off the queue (by id: a change queued meanwhile stays).
    static func dequeue(_ ids: [Int64], on db: any SQLDatabase) async throws {
        for chunk in ids.chunked(1_000) {
            try await db.raw("DELETE FROM analytics_dirty WHERE id IN (\(binds: chunk))").run()
        }
    }

    /// Queues subscriptions (a rebuild queues every one the ledger holds).
    static func enqueue(_ originals: [String], on db: any SQLDatabase) async throws {
        for chunk in originals.chunked(500) {
            var insert = BulkInsert(into: "analytics_dirty", columns: ["original_transaction_id"])
            for original in chunk { insert.values([original]) }
            try await insert.run(on: db)
        }
    }

    /// Every subscription the ledger holds.
    static func subscriptionOriginals(on db: any SQLDatabase) async throws -> [String] {
        try await db.raw("SELECT DISTINCT original_transaction_id FROM store_transactions WHERE product_kind = 'autoRenewable'").all()
            .map { try $0.decode(column: "original_transaction_id", as: String.self) }
    }

    /// Empties the rollups, the facts and the queue.
    static func clear(on db: any SQLDatabase) async throws {
        for table in ["analytics_days", "analytics_cohorts", "analytics_subscriptions", "analytics_dirty"] {
            try await db.raw("DELETE FROM \(unsafeRaw: table)").run()
        }
    }

    /// The facts last rolled up for `originals`, as stored.
    static func facts(of originals: [String], on db: any SQLDatabase) async throws -> [(String, String)] {
        try await db.raw(
            "SELECT original_transaction_id, facts FROM analytics_subscriptions WHERE original_transaction_id IN (\(binds: originals))"
        ).all().map { (try $0.decode(column: "original_transaction_id", as: String.self), try $0.decode(column: "facts", as: String.self)) }
    }

    /// Keeps each subscription's facts as now rolled up.
    static func saveFacts(_ facts: [(String, String)], on db: any SQLDatabase) async throws {
        for chunk in facts.chunked(400) {
            var insert = BulkInsert(
                into: "analytics_subscriptions",
                columns: ["original_transaction_id", "facts"],
                suffix: "ON CONFLICT (original_transaction_id) DO UPDATE SET facts = excluded.facts"
            )
            for (id, text) in chunk { insert.values([id, text]) }
            try await insert.run(on: db)
        }
    }

    /// Forgets the facts of subscriptions that no longer add anything.
    static func forgetFacts(_ originals: [String], on db: any SQLDatabase) async throws {
        guard !originals.isEmpty else { return }
        try await db.raw("DELETE FROM analytics_subscriptions WHERE original_transaction_id IN (\(binds: originals))").run()
    }

    /// Adds `change` to the daily and cohort cells.
    static func add(_ change: SubscriptionRollup.Cells, on db: any SQLDatabase) async throws {
        let dims = ["app", "store", "product_id", "storefront", "offer", "currency", "metric", "value"]
        func values(_ d: SubscriptionRollup.Dimensions, _ metric: AnalyticsMetric, _ value: Int64) -> [any Encodable & Sendable] {
            [d.app, d.store.rawValue, d.productId, d.storefront, d.offer, d.currency, metric.name, value]
        }
        for chunk in Array(change.days).chunked(300) {
            var insert = BulkInsert(
                into: "analytics_days",
                columns: ["day"] + dims,
                suffix: """
                    ON CONFLICT (metric, day, app, store, product_id, storefront, offer, currency)
                    DO UPDATE SET value = analytics_days.value + excluded.value
                    """
            )
            for (key, value) in chunk { insert.values([key.day] + values(key.dimensions, key.metric, value)) }
            try await insert.run(on: db)
        }
        for chunk in Array(change.cohorts).chunked(300) {
            var insert = BulkInsert(
                into: "analytics_cohorts",
                columns: ["cohort", "age"] + dims,
                suffix: """
                    ON CONFLICT (cohort, age, metric, app, store, product_id, storefront, offer, currency)
                    DO UPDATE SET value = analytics_cohorts.value + excluded.value
                    """
            )
            for (key, value) in chunk { insert.values([key.cohort, key.age] + values(key.dimensions, key.metric, value)) }
            try await insert.run(on: db)
        }
    }
}
