import Foundation
import SQLKit
import StorekeeperCore

/// A table used as a work queue: rows in `pending` are claimed with a lease (so a crashed worker's claims come back),
/// retried with backoff, and end as a dead letter after too many attempts. Several processes may claim at once on
/// PostgreSQL: rows another claimer locked are skipped (`FOR UPDATE SKIP LOCKED`), never waited for.
///
/// The queue's table has `id`, `status`, `attempts`, `next_attempt_at`, `claimed_until` and `last_error`.
public struct LeasedQueue: Sendable {
    /// The notification inbox: oldest signed first; a failure past the attempts is `dead`.
    public static let notifications = LeasedQueue(
        table: "notifications",
        order: "signed_date, received_at",
        deadStatus: "dead",
        touchesUpdatedAt: false
    )
    /// Apple's refund questions: oldest first; a final failure is `failed`.
    public static let consumptionRequests = LeasedQueue(
        table: "consumption_requests",
        order: "requested_at",
        deadStatus: "failed",
        touchesUpdatedAt: true
    )

    let table: String
    let order: String
    let deadStatus: String
    let touchesUpdatedAt: Bool

    /// Claims up to `limit` due rows for `lease`, counting an attempt each; returns them.
    public func claim(limit: Int, lease: Duration, now: Date, kind: DatabaseKind, on db: any SQLDatabase) async throws -> [any SQLRow] {
        let skipLocked: SQLQueryString = kind == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        let until = now.addingTimeInterval(Double(lease.components.seconds)).millis
        return try await db.raw(
            """
            UPDATE \(unsafeRaw: table) SET claimed_until = \(bind: until), attempts = attempts + 1
            WHERE id IN (
                SELECT id FROM \(unsafeRaw: table)
                WHERE status = 'pending' AND next_attempt_at <= \(bind: now.millis)
                  AND (claimed_until IS NULL OR claimed_until < \(bind: now.millis))
                ORDER BY \(unsafeRaw: order) LIMIT \(bind: limit)
            """ + skipLocked + ") RETURNING *"
        ).all()
    }

    /// Records a failed attempt: back in line after `retryAfter`, or a dead letter (kept with its error) once its
    /// attempts reach `maxAttempts`. Only a pending row changes.
    public func fail(
        _ id: String,
        error: String,
        maxAttempts: Int,
        retryAfter: Duration,
        now: Date,
        on db: any SQLDatabase
    ) async throws {
        let next = now.addingTimeInterval(Double(retryAfter.components.seconds)).millis
        let touch: SQLQueryString = touchesUpdatedAt ? ", updated_at = \(bind: now.millis)" : ""
        try await db.raw(
            """
            UPDATE \(unsafeRaw: table) SET claimed_until = NULL, last_error = \(bind: String(error.prefix(2000))),
                next_attempt_at = \(bind: next),
                status = CASE WHEN attempts >= \(bind: maxAttempts) THEN \(bind: deadStatus) ELSE 'pending' END
            """ + touch + " WHERE id = \(bind: id) AND status = 'pending'"
        ).run()
    }

    /// Puts a dead letter (or a pending row) back in line now with its attempts reset; whether there was one.
    public func retry(_ id: String, now: Date, on db: any SQLDatabase) async throws -> Bool {
        let touch: SQLQueryString = touchesUpdatedAt ? ", updated_at = \(bind: now.millis)" : ""
        return try await db.raw(
            """
            UPDATE \(unsafeRaw: table) SET status = 'pending', attempts = 0, next_attempt_at = \(bind: now.millis),
                claimed_until = NULL
            """ + touch + " WHERE id = \(bind: id) AND status IN (\(bind: deadStatus), 'pending') RETURNING id"
        ).first() != nil
    }

    /// How many pending rows are due at `now` (claimed or not).
    public func dueCount(now: Date, on db: any SQLDatabase) async throws -> Int {
        Int(
            try await db.raw(
                "SELECT COUNT(*) AS n FROM \(unsafeRaw: table) WHERE status = 'pending' AND next_attempt_at <= \(bind: now.millis)"
            ).first()?.decode(column: "n", as: Int64.self) ?? 0
        )
    }
}
