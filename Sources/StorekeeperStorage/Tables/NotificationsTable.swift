import Foundation
import SQLKit
import StorekeeperCore

/// `notifications`: Apple's notifications as received, keyed by `notificationUUID` (V1: `v1:` and the SHA-256 of
/// the body), with their processing state. Bodies are kept exactly as received — verified V2 bodies with their
/// certificate chains shared (``CompactNotificationBody``), everything else raw.
public enum NotificationsTable {
    /// Inserts the notifications not stored yet with one multi-row statement; returns the ids that were new.
    ///
    /// Rows in `processed` go in as already processed: the caller applies them in this same transaction, so the
    /// row never needs rewriting (in SQLite an update rewrites the whole row, body included). Headers in
    /// `storedHeaders` are known to be committed already and are not written again.
    public static func insert(
        _ batch: [NotificationInbox.Received],
        processed: Set<String> = [],
        storedHeaders: Set<String> = [],
        now: Date,
        on db: any SQLDatabase
    ) async throws -> Set<String> {
        guard !batch.isEmpty else { return [] }
        var insert = BulkInsert(
            into: "notifications",
            columns: [
                "id", "format", "bundle_id", "notification_type", "subtype", "original_transaction_id", "transaction_id",
                "signed_date", "environment", "body", "status", "attempts", "received_at", "next_attempt_at", "body_format",
                "processed_at",
            ],
            suffix: "ON CONFLICT (id) DO NOTHING RETURNING id"
        )
        var seen = Set<String>()
        var headers: [String: String] = [:]
        for n in batch where seen.insert(n.id).inserted {
            let compact = n.compactBody ?? (n.format == "v2" ? CompactNotificationBody(body: n.body) : nil)
            if let compact {
                for (digest, header) in compact.headers where !storedHeaders.contains(digest) { headers[digest] = header }
            }
            insert.values([
                n.id, n.format, n.bundleId, n.notificationType, n.subtype, n.originalTransactionId, n.transactionId,
                n.signedDate?.millis, n.environment, compact?.text ?? n.body, processed.contains(n.id) ? "processed" : "pending",
                0, now.millis, now.millis, compact == nil ? nil : CompactNotificationBody.format,
                processed.contains(n.id) ? now.millis : nil,
            ])
        }
        try await NotificationHeadersTable.insert(headers, on: db)
        return Set(try await insert.all(on: db).map { try $0.decode(column: "id", as: String.self) })
    }

    /// Per id of a batch, whether it is new: the first occurrence of an inserted id (two identical notifications
    /// in one batch: the first is new, the second a duplicate).
    public static func firstOccurrences(_ ids: [String], inserted: Set<String>) -> [Bool] {
        var claimed = Set<String>()
        return ids.map { inserted.contains($0) && claimed.insert($0).inserted }
    }

    /// Puts notifications that went in as processed back to pending (their effects failed in this transaction), with
    /// why, for the processor to try again on its own schedule.
    public static func markPending(_ failures: [String: String], now: Date, on db: any SQLDatabase) async throws {
        for (id, reason) in failures.sorted(by: { $0.key < $1.key }) {
            try await db.raw(
                """
                UPDATE notifications SET status = 'pending', processed_at = NULL, next_attempt_at = \(bind: now.millis),
                    last_error = \(bind: String(reason.prefix(500)))
                WHERE id = \(bind: id)
                """
            ).run()
        }
    }

    /// Marks notifications processed, inside the transaction that applied them (so applying and marking commit
    /// together: a crash before the commit leaves them pending and they are applied once, later).
    public static func markProcessed(_ ids: [String], now: Date, on db: any SQLDatabase) async throws {
        guard !ids.isEmpty else { return }
        try await db.raw(
            """
            UPDATE notifications SET status = 'processed', processed_at = \(bind: now.millis), claimed_until = NULL,
                last_error = NULL
            WHERE id IN (\(binds: ids))
            """
        ).run()
    }
}
