import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m017FinishedTransactions = Migration("017_finished_transactions") { db, _ in
        let statements: [SQLQueryString] = [
            // When Apple confirmed a delivered consumable finished (Finish Transaction), or why it never will.
            "ALTER TABLE apple_transactions ADD COLUMN finished_at BIGINT",
            "ALTER TABLE apple_transactions ADD COLUMN finish_error TEXT",
            // The few consumables still to finish, without indexing every transaction.
            """
            CREATE INDEX apple_transactions_unfinished ON apple_transactions (delivered_at)
            WHERE finished_at IS NULL AND finish_error IS NULL AND product_kind = 'consumable'
            """,
        ]
        for statement in statements { try await db.raw(statement).run() }
    }
}
