import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    /// The delivered transactions' table was named after the one store there was; it now carries each row's store.
    static let m027StoreTransactions = Migration("027_store_transactions") { db, _ in
        let statements: [SQLQueryString] = [
            "ALTER TABLE apple_transactions RENAME TO store_transactions",
            "ALTER TABLE store_transactions ADD COLUMN store TEXT NOT NULL DEFAULT 'app_store'",
        ]
        for statement in statements { try await db.raw(statement).run() }
    }
}
