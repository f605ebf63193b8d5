import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    /// Google Play: each delivered transaction's purchase token (a subscription's chain of tokens is found through it),
    /// and what Google must be told about it by when (acknowledge or consume), with its outcome; each subscription's store.
    static let m028PurchaseTokens = Migration("028_purchase_tokens") { db, _ in
        let statements: [SQLQueryString] = [
            "ALTER TABLE store_transactions ADD COLUMN purchase_token TEXT",
            // Which store follows each subscription: the renewal sweep asks Apple only about Apple's.
            "ALTER TABLE subscriptions ADD COLUMN store TEXT NOT NULL DEFAULT 'app_store'",
            "ALTER TABLE store_transactions ADD COLUMN acknowledge_action TEXT",
            "ALTER TABLE store_transactions ADD COLUMN acknowledge_by BIGINT",
            "ALTER TABLE store_transactions ADD COLUMN acknowledged_at BIGINT",
            "ALTER TABLE store_transactions ADD COLUMN acknowledge_error TEXT",
            "ALTER TABLE store_transactions ADD COLUMN acknowledge_attempts INTEGER NOT NULL DEFAULT 0",
            """
            CREATE INDEX store_transactions_by_purchase_token ON store_transactions (purchase_token)
            WHERE purchase_token IS NOT NULL
            """,
            // The few purchases still to acknowledge, soonest deadline first, without indexing every transaction.
            """
            CREATE INDEX store_transactions_unacknowledged ON store_transactions (acknowledge_by)
            WHERE acknowledge_action IS NOT NULL AND acknowledged_at IS NULL AND acknowledge_error IS NULL
            """,
        ]
        for statement in statements { try await db.raw(statement).run() }
    }
}
