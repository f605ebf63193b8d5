import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m007Hardening = Migration("007_hardening") { db, _ in
        let statements: [SQLQueryString] = [
            // Guests hold a server-issued credential; only its SHA-256 is kept.
            """
            CREATE TABLE guest_credentials (
                guest_id TEXT PRIMARY KEY, digest TEXT NOT NULL, origin TEXT NOT NULL, created_at BIGINT NOT NULL)
            """,
            // Refused webhook bodies are counted per source and reason, with one digest and a short prefix.
            """
            CREATE TABLE notification_refusals (
                source TEXT NOT NULL, reason TEXT NOT NULL, format TEXT NOT NULL, count BIGINT NOT NULL,
                digest TEXT NOT NULL, prefix TEXT NOT NULL, first_seen BIGINT NOT NULL, last_seen BIGINT NOT NULL,
                PRIMARY KEY (source, reason, format))
            """,
            // A parked purchase keeps what delivering it needs (receipt entries have no JWS), and who assigned it.
            "ALTER TABLE pending_transactions ADD COLUMN purchase_date BIGINT",
            "ALTER TABLE pending_transactions ADD COLUMN expires_date BIGINT",
            "ALTER TABLE pending_transactions ADD COLUMN quantity INTEGER",
            "ALTER TABLE pending_transactions ADD COLUMN offer_type INTEGER",
            "ALTER TABLE pending_transactions ADD COLUMN app_account_token TEXT",
            "ALTER TABLE pending_transactions ADD COLUMN subscription_group TEXT",
            "ALTER TABLE pending_transactions ADD COLUMN source TEXT",
            "ALTER TABLE pending_transactions ADD COLUMN resolved_by TEXT",
            "ALTER TABLE pending_transactions ADD COLUMN assigned_user TEXT",
            // `/health` writes here: a database that reads but cannot write is not healthy.
            "CREATE TABLE health_probes (instance TEXT PRIMARY KEY, checked_at BIGINT NOT NULL)",
            // The subscription and refund rows a merge or transfer moves with their user.
            "CREATE INDEX revocations_by_user ON revocations (user_id)",
            "CREATE INDEX consumption_requests_by_user ON consumption_requests (user_id)",
        ]
        for statement in statements { try await db.raw(statement).run() }
        // Bodies stored before this release: V1 bodies lose their shared secret, refused bodies become counts.
        for row in try await db.raw("SELECT id, body FROM notifications WHERE format = 'v1' AND status <> 'rejected'").all() {
            let id = try row.decode(column: "id", as: String.self)
            let body = try row.decode(column: "body", as: String.self)
            let redacted = NotificationRedaction.redactV1(body) ?? NotificationRedaction.prefix(of: body)
            try await db.raw("UPDATE notifications SET body = \(bind: redacted) WHERE id = \(bind: id)").run()
        }
        let refused = try await db.raw(
            """
            SELECT format, COUNT(*) AS n, MIN(received_at) AS first_seen, MAX(received_at) AS last_seen, MAX(id) AS digest
            FROM notifications WHERE status = 'rejected' GROUP BY format
            """
        ).all()
        for row in refused {
            let format = try row.decode(column: "format", as: String.self)
            let digest = String(try row.decode(column: "digest", as: String.self).dropFirst("rejected:".count))
            try await NotificationRefusalsTable.count(
                source: "stored before 007_hardening",
                reason: "refused",
                format: format,
                count: try row.decode(column: "n", as: Int64.self),
                digest: digest,
                prefix: "",
                firstSeen: Date(millis: try row.decode(column: "first_seen", as: Int64.self)),
                lastSeen: Date(millis: try row.decode(column: "last_seen", as: Int64.self)),
                on: db
            )
        }
        try await db.raw("DELETE FROM notifications WHERE status = 'rejected'").run()
    }
}
