import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m004GrantOrderAndSubscriptionReceipts = Migration("004_grant_order_and_subscription_receipts") { db, _ in
        let statements: [SQLQueryString] = [
            // endReplacedPeriods finds "the next start of this subscription" for each live grant: an index seek.
            "CREATE INDEX entitlement_grants_by_original_start ON entitlement_grants (original_transaction_id, starts_at)",
            "DROP INDEX entitlement_grants_by_original",
            // The latest legacy receipt per subscription, for verifyReceipt renewal checks.
            """
            CREATE TABLE subscription_receipts (
                original_transaction_id TEXT PRIMARY KEY, bundle_id TEXT NOT NULL, environment TEXT NOT NULL,
                receipt TEXT NOT NULL, updated_at BIGINT NOT NULL)
            """,
        ]
        for statement in statements { try await db.raw(statement).run() }
    }
}
