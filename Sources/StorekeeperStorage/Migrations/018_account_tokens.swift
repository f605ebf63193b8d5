import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m018AccountTokens = Migration("018_account_tokens") { db, _ in
        let statements: [SQLQueryString] = [
            // Each user's own app account token, made when Storekeeper first has to tell Apple who bought something.
            "ALTER TABLE users ADD COLUMN app_account_token TEXT",
            "CREATE UNIQUE INDEX users_by_app_account_token ON users (app_account_token) WHERE app_account_token IS NOT NULL",
            // Purchases that reached a user without a token of their own: the user's token is set at Apple (Set
            // App Account Token), so renewals and notifications name the user. `set_token` is what Apple confirmed.
            """
            CREATE TABLE account_tokens (
                original_transaction_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, bundle_id TEXT NOT NULL,
                environment TEXT NOT NULL, created_at BIGINT NOT NULL, set_at BIGINT, set_token TEXT, error TEXT)
            """,
            "CREATE INDEX account_tokens_due ON account_tokens (created_at) WHERE set_at IS NULL AND error IS NULL",
            "CREATE INDEX account_tokens_by_user ON account_tokens (user_id)",
            // Why Apple could not name the app install of a delivered transaction that came without its
            // appTransactionId (a legacy receipt, a transaction signed before iOS 18.4): Get App Transaction Info.
            "ALTER TABLE apple_transactions ADD COLUMN app_transaction_error TEXT",
            """
            CREATE INDEX apple_transactions_without_install ON apple_transactions (delivered_at)
            WHERE app_transaction_id IS NULL AND app_transaction_error IS NULL
            """,
        ]
        for statement in statements { try await db.raw(statement).run() }
    }
}
