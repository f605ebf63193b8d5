import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m013RiskSignals = Migration("013_risk_signals") { db, _ in
        let statements: [SQLQueryString] = [
            // One app install across several app users.
            "CREATE INDEX apple_transactions_by_app_transaction ON apple_transactions (app_transaction_id)",
            // Guests merged into an account (partial: most users were never merged).
            "CREATE INDEX users_by_merged_into ON users (merged_into) WHERE merged_into IS NOT NULL",
            // The few audit entries that are risk signals, without indexing every entry's action.
            """
            CREATE INDEX audit_entries_risky ON audit_entries (user_id)
            WHERE action IN ('risk.introductory_offer_repeated', 'transaction.claim_refused')
            """,
        ]
        for statement in statements { try await db.raw(statement).run() }
    }
}
