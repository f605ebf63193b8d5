import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m002NotificationInbox = Migration("002_notification_inbox") { db, _ in
        let statements: [SQLQueryString] = [
            """
            CREATE TABLE notifications (
                id TEXT PRIMARY KEY, format TEXT NOT NULL, bundle_id TEXT, notification_type TEXT, subtype TEXT,
                original_transaction_id TEXT, transaction_id TEXT, signed_date BIGINT, environment TEXT,
                body TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL, last_error TEXT,
                received_at BIGINT NOT NULL, processed_at BIGINT, next_attempt_at BIGINT)
            """,
            "CREATE INDEX notifications_by_status ON notifications (status, next_attempt_at)",
            "CREATE INDEX notifications_by_original ON notifications (original_transaction_id, signed_date)",
        ]
        for statement in statements { try await db.raw(statement).run() }
    }
}
