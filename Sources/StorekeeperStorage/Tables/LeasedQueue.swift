import Foundation
import SQLKit
import StorekeeperCore

/// A table used as a work queue: rows in `pending` are claimed with a lease (so a crashed worker's claims come back),
/// retried with backoff, and end as a dead letter after too many attempts. Several processes may claim at once on
/// PostgreSQL: rows another claimer locked are skipped (`FOR UPDATE SKIP LOCKED`), never waited for.
///
/// The queue's table has `id`, `status`, `attempts`, `next_attempt_at`, `claimed_until` and `last_error`. A queue
/// may be split into partitions claimed apart (the webhook queue's endpoints) and keep its rows in lines (a user's
/// deliveries): a row is then claimed only while no older row of its line is pending.
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

    /// The webhook queue: one partition per endpoint, one line per ordering key (a user, or one subscription's
    /// forwarded notifications); a final failure is `dead`.
    static let webhooks = LeasedQueue(
        table: "webhook_queue",
        order: "next_attempt_at",
        deadStatus: "dead",
        touchesUpdatedAt: false,
        partition: "endpoint",
        line: "ordering_key"
    )

    let table: String
    let order: String
    let deadStatus: String
    let touchesUpdatedAt: Bool
    /// The column whose value a claim names, if the queue is partitioned.
    var partition: String? = nil
    /// The column whose equal values form a line served oldest first (by `id`), if any.
    var line: String? = nil

    /// Claims up to `limit` due rows (of `partition`, for a partitioned queue) for `lease`, counting an attempt each;
    /// returns their `returning` columns.
    public func claim(
        limit: Int,
        lease: Duration,
        now: Date,
        kind: DatabaseKind,
        partition value: String? = nil,
        returning: String = "*",
        on db: any SQLDatabase
    ) async throws -> [any SQLRow] {
        let skipLocked: SQLQueryString = kind == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        let until = now.addingTimeInterval(Double(lease.components.seconds)).millis
        var scope: SQLQueryString = ""
        if let partition, let value { scope = " AND q.\(unsafeRaw: partition) = \(bind: value)" }
        if let line {
            // Served through the index on (partition, status, line, id).
            let samePartition: SQLQueryString = partition.map { " AND o.\(unsafeRaw: $0) = q.\(unsafeRaw: $0)" } ?? ""
            scope =
                scope + " AND NOT EXISTS (SELECT 1 FROM \(unsafeRaw: table) o WHERE o.status = 'pending'" + samePartition
                + " AND o.\(unsafeRaw: line) = q.\(unsafeRaw: line) AND o.id < q.id)"
        }
        // The outer conditions repeat the inner ones: on PostgreSQL a row another transaction changed between the
        // subquery's read and the update is checked again, never claimed twice.
        return try await db.raw(
            """
            UPDATE \(unsafeRaw: table) SET claimed_until = \(bind: until), attempts = attempts + 1
            WHERE id IN (
                SELECT q.id FROM \(unsafeRaw: table) q
                WHERE q.status = 'pending' AND q.next_attempt_at <= \(bind: now.millis)
                  AND (q.claimed_until IS NULL OR q.claimed_until < \(bind: now.millis))
            """ + scope + " ORDER BY \(unsafeRaw: order) LIMIT \(bind: limit)" + skipLocked
                + """
                ) AND status = 'pending' AND (claimed_until IS NULL OR claimed_until < \(bind: now.millis))
                RETURNING \(unsafeRaw: returning)
                """
        ).all()
    }

    /// Gives up the claims on `ids` without an attempt's outcome, so the rows are due again at once.
    public func release<ID: Encodable & Sendable>(_ ids: [ID], on db: any SQLDatabase) async throws {
        guard !ids.isEmpty else { return }
        try await db.raw("UPDATE \(unsafeRaw: table) SET claimed_until = NULL WHERE status = 'pending' AND id IN (\(binds: ids))").run()
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
