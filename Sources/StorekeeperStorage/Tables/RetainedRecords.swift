import Foundation
import SQLKit
import StorekeeperCore

/// Pruning what only grows — outbox events, Apple's processed notifications, audit entries — a page at a time and
/// never past what a webhook endpoint has yet to receive: an event goes only once every events endpoint's cursor is
/// past it and no delivery of it is pending or dead; a notification only once it was applied and every endpoint that
/// forwards Apple's notifications has moved past it and delivered it.
public enum RetainedRecords {
    /// Deletes up to `limit` outbox events that occurred before `before`; returns how many.
    public static func pruneEvents(before: Date, endpoints: [String], limit: Int, on db: any SQLDatabase) async throws -> Int {
        let cursor: SQLQueryString =
            endpoints.isEmpty
            ? ""
            : """
            AND e.position <= (SELECT COALESCE(MIN(w.event_cursor), 0) FROM webhook_endpoints w WHERE w.name IN (\(binds: endpoints.sorted())))
                AND (SELECT COUNT(*) FROM webhook_endpoints w WHERE w.name IN (\(binds: endpoints.sorted()))) = \(bind: Set(endpoints).count)
            """
        return try await db.raw(
            """
            DELETE FROM events WHERE position IN (
                SELECT e.position FROM events e
                WHERE e.occurred_at < \(bind: before.millis) \(cursor)
                    AND NOT EXISTS (SELECT 1 FROM webhook_queue q WHERE q.event_position = e.position AND q.status <> 'delivered')
                ORDER BY e.position LIMIT \(bind: limit))
            RETURNING position
            """
        ).all().count
    }

    /// Deletes up to `limit` applied notifications received before `before`; returns how many.
    public static func pruneNotifications(before: Date, endpoints: [String], limit: Int, on db: any SQLDatabase) async throws -> Int {
        let cursor: SQLQueryString =
            endpoints.isEmpty
            ? ""
            : """
            AND n.received_at < (SELECT COALESCE(MIN(w.notification_cursor), 0) FROM webhook_endpoints w WHERE w.name IN (\(binds: endpoints.sorted())))
                AND (SELECT COUNT(*) FROM webhook_endpoints w WHERE w.name IN (\(binds: endpoints.sorted()))) = \(bind: Set(endpoints).count)
            """
        return try await db.raw(
            """
            DELETE FROM notifications WHERE id IN (
                SELECT n.id FROM notifications n
                WHERE n.status = 'processed' AND n.received_at < \(bind: before.millis) \(cursor)
                    AND NOT EXISTS (SELECT 1 FROM webhook_queue q WHERE q.notification_id = n.id AND q.status <> 'delivered')
                ORDER BY n.received_at LIMIT \(bind: limit))
            RETURNING id
            """
        ).all().count
    }

    /// Deletes up to `limit` audit entries written before `before`; returns how many.
    public static func pruneAudit(before: Date, limit: Int, on db: any SQLDatabase) async throws -> Int {
        try await db.raw(
            """
            DELETE FROM audit_entries WHERE id IN (
                SELECT id FROM audit_entries WHERE created_at < \(bind: before.millis) ORDER BY id LIMIT \(bind: limit))
            RETURNING id
            """
        ).all().count
    }
}
