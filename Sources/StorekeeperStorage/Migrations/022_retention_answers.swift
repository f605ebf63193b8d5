import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m022RetentionAnswers = Migration("022_retention_answers") { db, _ in
        // Storekeeper's Retention Messaging answers per subscription, so a retention offer redeemed later is
        // attributed to the answer (rule) that offered it; and the retention offers' transactions by date.
        let statements: [SQLQueryString] = [
            """
            CREATE TABLE retention_answers (original_transaction_id TEXT NOT NULL, answered_at BIGINT NOT NULL,
                rule_id TEXT NOT NULL, kind TEXT NOT NULL, offer_id TEXT,
                PRIMARY KEY (original_transaction_id, answered_at, rule_id))
            """,
            "CREATE INDEX apple_transactions_retention_offers ON apple_transactions (purchase_date) WHERE offer_type = 5",
        ]
        for statement in statements { try await db.raw(statement).run() }
    }
}
