import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m012Console = Migration("012_console") { db, kind in
        let statements: [SQLQueryString] = [
            // Operator console sessions: only the SHA-256 of the cookie's token is stored.
            """
            CREATE TABLE console_sessions (
                token_hash TEXT PRIMARY KEY, operator TEXT NOT NULL, role TEXT NOT NULL, csrf TEXT NOT NULL,
                created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)
            """,
            "CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at)",
            // What operators did, whoever it concerned (catalog edits and retries concern no user).
            kind == .postgres
                ? """
                CREATE TABLE operator_actions (
                    id BIGSERIAL PRIMARY KEY, operator TEXT NOT NULL, role TEXT NOT NULL, action TEXT NOT NULL,
                    subject TEXT NOT NULL, detail TEXT, created_at BIGINT NOT NULL)
                """
                : """
                CREATE TABLE operator_actions (
                    id INTEGER PRIMARY KEY AUTOINCREMENT, operator TEXT NOT NULL, role TEXT NOT NULL, action TEXT NOT NULL,
                    subject TEXT NOT NULL, detail TEXT, created_at BIGINT NOT NULL)
                """,
            // Support finds a customer by the token their app put on the purchase.
            "CREATE INDEX apple_transactions_by_token ON apple_transactions (app_account_token)",
        ]
        for statement in statements { try await db.raw(statement).run() }
    }
}
