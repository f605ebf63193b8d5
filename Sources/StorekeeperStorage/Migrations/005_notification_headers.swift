import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m005NotificationHeaders = Migration("005_notification_headers") { db, _ in
        let statements: [SQLQueryString] = [
            // JWS headers (certificate chains) shared by stored notification bodies; see CompactNotificationBody.
            "CREATE TABLE notification_headers (digest TEXT PRIMARY KEY, header TEXT NOT NULL)",
            // NULL: the body is stored raw.
            "ALTER TABLE notifications ADD COLUMN body_format TEXT",
        ]
        for statement in statements { try await db.raw(statement).run() }
    }
}
