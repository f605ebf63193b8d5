import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m015Webhooks = Migration("015_webhooks") { db, kind in
        let id = kind == .postgres ? "id BIGSERIAL PRIMARY KEY" : "id INTEGER PRIMARY KEY AUTOINCREMENT"
        let statements: [SQLQueryString] = [
            // Each configured endpoint: how far the outbox (and Apple's notifications) were queued for it, paused.
            """
            CREATE TABLE webhook_endpoints (
                name TEXT PRIMARY KEY, event_cursor BIGINT NOT NULL, notification_cursor BIGINT NOT NULL,
                paused INTEGER NOT NULL, updated_at BIGINT NOT NULL)
            """,
            // One delivery of one event (or one Apple notification) to one endpoint. `ordering_key` is the user
            // (or `apple:<original transaction>`): a row is sent only when no older row of its key is pending.
            """
            CREATE TABLE webhook_queue (
                \(unsafeRaw: id), endpoint TEXT NOT NULL, ordering_key TEXT NOT NULL, event_position BIGINT,
                notification_id TEXT, origin TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL,
                created_at BIGINT NOT NULL, next_attempt_at BIGINT NOT NULL, claimed_until BIGINT, last_error TEXT,
                last_status INTEGER, delivered_at BIGINT)
            """,
            "CREATE INDEX webhook_queue_heads ON webhook_queue (endpoint, status, ordering_key, id)",
            "CREATE INDEX webhook_queue_due ON webhook_queue (endpoint, status, next_attempt_at)",
            // A notification is queued once per endpoint however often the forwarder reads it again.
            """
            CREATE UNIQUE INDEX webhook_queue_forwarded ON webhook_queue (endpoint, notification_id)
            WHERE origin = 'forward'
            """,
            "CREATE INDEX notifications_by_received_at ON notifications (received_at)",
        ]
        for statement in statements { try await db.raw(statement).run() }
    }
}
