import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m011Reconciliation = Migration("011_reconciliation") { db, _ in
        let statements: [SQLQueryString] = [
            // One row per UTC day reconciled against Apple's sales report, and what disagreed on it.
            """
            CREATE TABLE reconciliation_days (
                day TEXT PRIMARY KEY, status TEXT NOT NULL, apple_units BIGINT NOT NULL, storekeeper_units BIGINT NOT NULL,
                apple_refunds BIGINT NOT NULL, storekeeper_refunds BIGINT NOT NULL, findings INTEGER NOT NULL, message TEXT,
                ran_at BIGINT NOT NULL, runs INTEGER NOT NULL)
            """,
            """
            CREATE TABLE reconciliation_findings (
                day TEXT NOT NULL, kind TEXT NOT NULL, product_id TEXT NOT NULL, storefront TEXT NOT NULL, currency TEXT NOT NULL,
                apple_units BIGINT NOT NULL, storekeeper_units BIGINT NOT NULL, apple_amount BIGINT NOT NULL,
                storekeeper_amount BIGINT NOT NULL, transactions TEXT NOT NULL, detail TEXT NOT NULL, found_at BIGINT NOT NULL,
                PRIMARY KEY (day, kind, product_id, storefront, currency))
            """,
            // Apple books a refund on the day it refunds: Storekeeper's refunds are read by that day.
            "CREATE INDEX revocations_by_date ON revocations (revoked_at)",
        ]
        for statement in statements { try await db.raw(statement).run() }
    }
}
