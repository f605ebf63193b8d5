import Foundation
import SQLKit
import StorageTestSupport
import StorekeeperCore
import StorekeeperStorage
import Testing

/// The analytics rollups on both databases: `030_subscription_rollups` queues the subscriptions a database already
/// held; triggers queue each written fact (a period, a refund, an expiry); a refresh takes a subscription's old cells
/// out and puts its new ones in; a rebuild gives the same cells; bad facts left by others stop a refresh. Facts are
/// written in transactions, as the ledger writes them (SQLite commits a statement run outside one only when the
/// statement is finalized, which a reader on another connection may not see yet).
@Suite struct AnalyticsRollupTests {
    static let day: Int64 = 86_400_000
    static let start: Int64 = 1_767_225_600_000  // 2026-01-01

    static func insertPeriod(
        _ id: String,
        original: String,
        at start: Int64,
        days: Int64 = 30,
        price: Int64 = 9_990,
        environment: String = "Production",
        ownership: String? = nil,
        on db: any SQLDatabase
    ) async throws {
        try await db.raw(
            """
            INSERT INTO store_transactions (transaction_id, original_transaction_id, user_id, bundle_id, product_id, product_kind,
                environment, quantity, purchase_date, expires_date, source, delivered_at, price, currency, storefront, ownership_type)
            VALUES (\(bind: id), \(bind: original), 'alice', 'com.example', 'monthly', 'autoRenewable', \(bind: environment), 1,
                \(bind: start), \(bind: start + days * day), 'signedTransaction', \(bind: start), \(bind: price), 'USD', 'USA',
                \(bind: ownership))
            """
        ).run()
    }

    static func total(_ metric: String, on db: any SQLDatabase, before day: String? = nil) async throws -> Int64 {
        let row = try await db.raw(
            "SELECT CAST(COALESCE(SUM(value), 0) AS BIGINT) AS v FROM analytics_days WHERE metric = \(bind: metric) AND day < \(bind: day ?? "9999")"
        ).first()
        return try row?.decode(column: "v", as: Int64.self) ?? 0
    }

    @Test func aDatabaseWithSubscriptionsIsRolledUpAfterTheMigration() async throws {
        try await StorageHarness.withEachProvider { provider in
            let previous = Array(StorekeeperSchema.migrations.prefix { $0.name != "030_subscription_rollups" })
            try await Migrator(migrations: previous).migrate(provider)
            try await provider.withTransaction { db throws in
                try await Self.insertPeriod("1", original: "1", at: Self.start, on: db)
                try await Self.insertPeriod("2", original: "1", at: Self.start + 30 * Self.day, on: db)
            }
            #expect(try await Migrator(migrations: StorekeeperSchema.migrations).migrate(provider) == ["030_subscription_rollups"])
            let store = AnalyticsStore(provider: provider, lifecycle: Self.lifecycle)
            #expect(try await store.pending() == 1, "the subscription the database held is queued once")
            #expect(try await store.refreshAll() == 0)
            try await provider.withTransaction { db throws in
                #expect(try await Self.total("new", on: db) == 1)
                #expect(try await Self.total("renewal", on: db) == 1)
                #expect(try await Self.total("revenue", on: db) == 19_980)
                // Active while either period is in force, nobody after the second ends.
                #expect(try await Self.total("active", on: db, before: "2026-01-15") == 1)
                #expect(try await Self.total("active", on: db) == 0)
            }
        }
    }

    @Test func writesQueueTheirSubscriptionAndARefreshReplacesItsCells() async throws {
        try await StorageHarness.withEachProvider { provider in
            try await Migrator(migrations: StorekeeperSchema.migrations).migrate(provider)
            let store = AnalyticsStore(provider: provider, lifecycle: Self.lifecycle)
            try await provider.withTransaction { db throws in
                try await Self.insertPeriod("10", original: "10", at: Self.start, on: db)
                // Neither sandbox nor a family member's copy is a subscriber.
                try await Self.insertPeriod("20", original: "20", at: Self.start, environment: "Sandbox", on: db)
                try await Self.insertPeriod("30", original: "30", at: Self.start, ownership: "FAMILY_SHARED", on: db)
            }
            let written = try await store.pending()
            #expect(written == 3)
            try await store.refreshAll()
            try await provider.withTransaction { db throws in
                #expect(try await Self.total("new", on: db) == 1)
                #expect(try await Self.total("mrr", on: db, before: "2026-01-10") == 9_990)
            }
            // A refund ten days in: the period ends then, and the money comes back.
            try await provider.withTransaction { db throws in
                try await db.raw(
                    """
                    INSERT INTO revocations (transaction_id, user_id, original_transaction_id, product_id, product_kind, kind, status,
                        revoked_at, generation, coins_taken, coins_forgiven, decided_at, updated_at)
                    VALUES ('10', 'alice', '10', 'monthly', 'autoRenewable', 'refund', 'revoked', \(bind: Self.start + 10 * Self.day), 1, 0, 0,
                        \(bind: Self.start + 10 * Self.day), \(bind: Self.start + 10 * Self.day))
                    """
                ).run()
            }
            let queued = try await store.pending()
            #expect(queued == 1, "the refund queued its subscription (\(provider.kind))")
            try await store.refreshAll()
            try await provider.withTransaction { db throws in
                #expect(try await Self.total("refunds", on: db) == 1)
                #expect(try await Self.total("refunded", on: db) == 9_990)
                #expect(try await Self.total("active", on: db, before: "2026-01-10") == 1)
                #expect(try await Self.total("active", on: db, before: "2026-01-11") == 0, "the refund ended the period on day 11")
                #expect(try await Self.total("mrr", on: db, before: "2026-01-11") == 0)
                #expect(try await Self.total("new", on: db) == 1, "taking the old cells out left the subscription counted once")
            }
            // Apple's word that it expired (voluntarily) after a resubscription: churn, then a reactivation.
            try await provider.withTransaction { db throws in
                try await db.raw(
                    """
                    INSERT INTO notifications (id, format, bundle_id, notification_type, subtype, original_transaction_id, signed_date,
                        environment, body, status, attempts, received_at)
                    VALUES ('n1', 'v2', 'com.example', 'EXPIRED', 'VOLUNTARY', '10', \(bind: Self.start + 12 * Self.day), 'Production', '{}',
                        'processed', 1, \(bind: Self.start + 12 * Self.day))
                    """
                ).run()
                try await Self.insertPeriod("11", original: "10", at: Self.start + 40 * Self.day, on: db)
            }
            try await store.refreshAll()
            try await provider.withTransaction { db throws in
                #expect(try await Self.total("churn_voluntary", on: db) == 1)
                #expect(try await Self.total("reactivation", on: db) == 1)
                #expect(try await Self.total("renewal", on: db) == 0, "a period after an expiry is a reactivation, not a renewal")
            }
            let before = try await Self.snapshot(provider)
            #expect(try await store.rebuild() == 3, "every subscription, sandbox and shared ones included, is read again")
            #expect(try await Self.snapshot(provider) == before, "a rebuild from the records gives the same cells")
        }
    }

    @Test func factsItCannotReadStopTheRefresh() async throws {
        try await StorageHarness.withEachProvider { provider in
            try await Migrator(migrations: StorekeeperSchema.migrations).migrate(provider)
            try await provider.withTransaction { db throws in
                try await db.raw("INSERT INTO analytics_subscriptions (original_transaction_id, facts) VALUES ('9', 'not facts')").run()
                try await Self.insertPeriod("9", original: "9", at: Self.start, on: db)
            }
            let store = AnalyticsStore(provider: provider, lifecycle: Self.lifecycle)
            await #expect(throws: StorageError.self) { try await store.refresh() }
            #expect(try await store.pending() == 1, "nothing was taken off the queue")
        }
    }

    static func snapshot(_ provider: any DatabaseProvider) async throws -> [String] {
        try await provider.withTransaction { db throws in
            let days = try await db.raw(
                "SELECT day, metric, product_id, currency, value FROM analytics_days WHERE value <> 0 ORDER BY metric, day, product_id, currency"
            ).all().map {
                "\(try $0.decode(column: "day", as: String.self)) \(try $0.decode(column: "metric", as: String.self)) "
                    + "\(try $0.decode(column: "value", as: Int64.self))"
            }
            let cohorts = try await db.raw(
                "SELECT cohort, age, metric, value FROM analytics_cohorts WHERE value <> 0 ORDER BY cohort, age, metric"
            ).all().map {
                "\(try $0.decode(column: "cohort", as: String.self)) \(try $0.decode(column: "age", as: Int64.self)) "
                    + "\(try $0.decode(column: "metric", as: String.self)) \(try $0.decode(column: "value", as: Int64.self))"
            }
            return days + cohorts
        }
    }

    static let lifecycle = LifecycleCounting(types: ["EXPIRED"]) { type, subtype in
        guard type == "EXPIRED" else { return nil }
        return subtype == "BILLING_RETRY" ? .billingChurn : .voluntaryChurn
    }
}
