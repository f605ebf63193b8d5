import Foundation
import SQLKit
import StorekeeperCore

/// The one gateway of the webhook queue and its endpoints: the deliveries of the outbox (and of Apple's
/// notifications) to the app's backend, one row per item per endpoint, written only through the ledger.
///
/// Rows are queued from the outbox in position order (commit order, so a cursor never skips an event committed late)
/// and sent oldest first per ordering key — the user, or `apple:<original transaction>` for forwarded notifications:
/// a row is claimed only when no older row of its key is still pending (``LeasedQueue/webhooks``), so a user's next
/// event waits until the previous one was acknowledged or dead-lettered, while different users go in parallel.
public enum WebhookQueueTable {
    /// One queued delivery.
    public struct Item: Sendable, Hashable {
        public var id: Int64
        public var endpoint: String
        public var orderingKey: String
        /// The outbox event to send (events endpoints).
        public var eventPosition: Int64?
        /// The Apple notification to forward (forwarding endpoints).
        public var notificationId: String?
        /// Attempts so far, this one included.
        public var attempts: Int
        public var createdAt: Date

        static let columns = "id, endpoint, ordering_key, event_position, notification_id, attempts, created_at"

        init(row: any SQLRow) throws {
            id = try row.decode(column: "id", as: Int64.self)
            endpoint = try row.decode(column: "endpoint", as: String.self)
            orderingKey = try row.decode(column: "ordering_key", as: String.self)
            eventPosition = try row.decode(column: "event_position", as: Int64?.self)
            notificationId = try row.decode(column: "notification_id", as: String?.self)
            attempts = Int(try row.decode(column: "attempts", as: Int64.self))
            createdAt = Date(millis: try row.decode(column: "created_at", as: Int64.self))
        }
    }

    /// What one attempt came to.
    public enum Outcome: Sendable, Hashable {
        case delivered(status: Int)
        /// Failed; back in line at `retryAt`, or a dead letter when nil.
        case failed(status: Int?, error: String, retryAt: Date?)
    }

    /// What a replay re-sends.
    public enum Replay: Sendable, Hashable {
        case event(position: Int64)
        case user(UserID)
        /// Events that occurred in `[from, to)`.
        case range(from: Date, to: Date)
    }

    /// One row to queue: an outbox event (`position`) or an Apple notification (`notification`) for `endpoint`.
    public struct Enqueued: Sendable {
        var endpoint: String
        var key: String
        var position: Int64? = nil
        var notification: String? = nil
        var origin: String

        public init(endpoint: String, key: String, position: Int64? = nil, notification: String? = nil, origin: String) {
            self.endpoint = endpoint
            self.key = key
            self.position = position
            self.notification = notification
            self.origin = origin
        }
    }

    /// What an endpoint is sent.
    public enum Source: Sendable {
        /// The outbox's events it accepts, given the event's type and, for an event about one purchase, its app's
        /// bundle id.
        case outbox(@Sendable (String, String?) -> Bool)
        /// Apple's notifications received since its cursor less `overlap`, whose bundle id it accepts.
        case notifications(overlap: TimeInterval, @Sendable (String?) -> Bool)
    }

    /// Queues what `source` gained for `endpoint` since its cursor (at most `limit` read); how many outbox events
    /// were read, or notifications newly queued (0: caught up).
    public static func queue(
        _ source: Source,
        endpoint: String,
        limit: Int,
        now: Date,
        kind: DatabaseKind,
        on db: any SQLDatabase
    ) async throws -> Int {
        switch source {
        case .outbox(let accepts):
            try await queueEvents(endpoint: endpoint, limit: limit, now: now, kind: kind, accepts: accepts, on: db)
        case .notifications(let overlap, let accepts):
            try await queueNotifications(endpoint: endpoint, overlap: overlap, limit: limit, now: now, kind: kind, accepts: accepts, on: db)
        }
    }

    /// The event types whose subject is a transaction (the original one for subscriptions), so they belong to that
    /// purchase's app.
    static let purchaseScoped: [String] = [
        LedgerEvent.EventType.delivered, .refunded, .reinstated, .transferred, .subscriptionChanged, .consumptionAnswered,
    ].map(\.rawValue)

    /// Adds the endpoints not yet known. A new endpoint starts at the outbox's end and now: it is sent what happens
    /// from here on (history is a replay away).
    public static func register(_ names: [String], now: Date, on db: any SQLDatabase) async throws {
        let last = try await EventsTable.lastPosition(on: db)
        var insert = BulkInsert(
            into: "webhook_endpoints",
            columns: ["name", "event_cursor", "notification_cursor", "paused", "updated_at"],
            suffix: "ON CONFLICT (name) DO NOTHING"
        )
        for name in names { insert.values([name, last, now.millis, 0, now.millis]) }
        if !insert.isEmpty { try await insert.run(on: db) }
    }

    /// The one way rows enter the queue, pending and due now; returns how many were inserted (a notification already
    /// queued for the endpoint is skipped).
    public static func enqueue(_ rows: [Enqueued], now: Date, on db: any SQLDatabase) async throws -> Int {
        guard !rows.isEmpty else { return 0 }
        var insert = BulkInsert(
            into: "webhook_queue",
            columns: [
                "endpoint", "ordering_key", "event_position", "notification_id", "origin", "status", "attempts", "created_at", "next_attempt_at",
            ],
            suffix: "ON CONFLICT (endpoint, notification_id) WHERE origin = 'forward' DO NOTHING RETURNING id"
        )
        for row in rows {
            insert.values([row.endpoint, row.key, row.position, row.notification, row.origin, "pending", 0, now.millis, now.millis])
        }
        return try await insert.all(on: db).count
    }

    /// Queues the outbox events after the endpoint's cursor that `accepts` (given the event's type and, for an
    /// event about one purchase, its app's bundle id), up to `limit` events read, and moves the cursor past them.
    /// Returns how many events were read (0: caught up).
    static func queueEvents(
        endpoint: String,
        limit: Int,
        now: Date,
        kind: DatabaseKind,
        accepts: @Sendable (String, String?) -> Bool,
        on db: any SQLDatabase
    ) async throws -> Int {
        let lock: SQLQueryString = kind == .postgres ? " FOR UPDATE" : ""
        guard
            let cursor = try await db.raw("SELECT event_cursor FROM webhook_endpoints WHERE name = \(bind: endpoint)" + lock).first()?
                .decode(column: "event_cursor", as: Int64.self)
        else { return 0 }
        let rows = try await db.raw(
            """
            SELECT e.position, e.user_id, e.type, COALESCE(t.bundle_id, p.bundle_id) AS bundle_id FROM events e
            LEFT JOIN store_transactions t ON t.transaction_id = e.subject AND e.type IN (\(binds: Self.purchaseScoped))
            LEFT JOIN pending_transactions p ON p.transaction_id = e.subject AND e.type = \(bind: LedgerEvent.EventType.parked.rawValue)
            WHERE e.position > \(bind: cursor) ORDER BY e.position LIMIT \(bind: limit)
            """
        ).all()
        guard !rows.isEmpty else { return 0 }
        var queued: [Enqueued] = []
        var last = cursor
        for row in rows {
            last = try row.decode(column: "position", as: Int64.self)
            guard accepts(try row.decode(column: "type", as: String.self), try row.decode(column: "bundle_id", as: String?.self)) else {
                continue
            }
            queued.append(Enqueued(endpoint: endpoint, key: try row.decode(column: "user_id", as: String.self), position: last, origin: "outbox"))
        }
        _ = try await enqueue(queued, now: now, on: db)
        try await db.raw(
            "UPDATE webhook_endpoints SET event_cursor = \(bind: last), updated_at = \(bind: now.millis) WHERE name = \(bind: endpoint)"
        )
        .run()
        return rows.count
    }

    /// Queues Apple's stored notifications received since the endpoint's cursor, less `overlap` (receipt times are
    /// not commit-ordered across processes), whose bundle id `accepts`; each notification once per endpoint. Returns
    /// how many were newly queued.
    static func queueNotifications(
        endpoint: String,
        overlap: TimeInterval,
        limit: Int,
        now: Date,
        kind: DatabaseKind,
        accepts: @Sendable (String?) -> Bool,
        on db: any SQLDatabase
    ) async throws -> Int {
        let lock: SQLQueryString = kind == .postgres ? " FOR UPDATE" : ""
        guard
            let cursor = try await db.raw("SELECT notification_cursor FROM webhook_endpoints WHERE name = \(bind: endpoint)" + lock)
                .first()?.decode(column: "notification_cursor", as: Int64.self)
        else { return 0 }
        let since = cursor - Int64(overlap * 1000)
        // Those already queued for this endpoint are skipped here (the unique index guards the rest).
        let rows = try await db.raw(
            """
            SELECT n.id, n.bundle_id, n.original_transaction_id, n.received_at FROM notifications n
            WHERE n.received_at >= \(bind: since) AND NOT EXISTS (
                SELECT 1 FROM webhook_queue w WHERE w.endpoint = \(bind: endpoint) AND w.origin = 'forward' AND w.notification_id = n.id)
            ORDER BY n.received_at, n.id LIMIT \(bind: limit)
            """
        ).all()
        var newest = cursor
        var forwards: [Enqueued] = []
        for row in rows {
            newest = max(newest, try row.decode(column: "received_at", as: Int64.self))
            guard accepts(try row.decode(column: "bundle_id", as: String?.self)) else { continue }
            let id = try row.decode(column: "id", as: String.self)
            let original = try row.decode(column: "original_transaction_id", as: String?.self) ?? id
            forwards.append(Enqueued(endpoint: endpoint, key: "apple:" + original, notification: id, origin: "forward"))
        }
        let queued = try await enqueue(forwards, now: now, on: db)
        if newest > cursor {
            try await db.raw(
                "UPDATE webhook_endpoints SET notification_cursor = \(bind: newest), updated_at = \(bind: now.millis) WHERE name = \(bind: endpoint)"
            ).run()
        }
        return queued
    }

    /// Claims up to `limit` rows of `endpoint` that are due and at the head of their ordering key, for `lease`;
    /// each claim counts an attempt. Oldest queued first.
    public static func claim(
        endpoint: String,
        limit: Int,
        lease: Duration,
        now: Date,
        kind: DatabaseKind,
        on db: any SQLDatabase
    ) async throws -> [Item] {
        try await LeasedQueue.webhooks.claim(
            limit: limit,
            lease: lease,
            now: now,
            kind: kind,
            partition: endpoint,
            returning: Item.columns,
            on: db
        )
        .map(Item.init(row:)).sorted { $0.id < $1.id }
    }

    /// Records the attempts' outcomes: acknowledged, back in line, or dead letters. Only pending rows change.
    public static func record(_ outcomes: [(id: Int64, outcome: Outcome)], now: Date, on db: any SQLDatabase) async throws {
        let delivered = outcomes.compactMap { item -> Int64? in
            if case .delivered = item.outcome { return item.id }
            return nil
        }
        if !delivered.isEmpty {
            try await db.raw(
                """
                UPDATE webhook_queue SET status = 'delivered', delivered_at = \(bind: now.millis), claimed_until = NULL,
                    last_error = NULL
                WHERE status = 'pending' AND id IN (\(binds: delivered))
                """
            ).run()
        }
        for (id, outcome) in outcomes {
            guard case .failed(let status, let error, let retryAt) = outcome else { continue }
            try await db.raw(
                """
                UPDATE webhook_queue SET status = \(bind: retryAt == nil ? "dead" : "pending"), claimed_until = NULL,
                    next_attempt_at = \(bind: (retryAt ?? now).millis), last_error = \(bind: String(error.prefix(500))),
                    last_status = \(bind: status)
                WHERE status = 'pending' AND id = \(bind: id)
                """
            ).run()
        }
    }

    /// Gives up the claims on `ids` without recording an attempt's outcome, so they are due again at once.
    public static func release(_ ids: [Int64], on db: any SQLDatabase) async throws {
        try await LeasedQueue.webhooks.release(ids, on: db)
    }

    /// Pauses or resumes an endpoint, registering it first if the sender has not yet; whether it exists.
    public static func setPaused(_ endpoint: String, _ paused: Bool, now: Date, on db: any SQLDatabase) async throws -> Bool {
        try await register([endpoint], now: now, on: db)
        return try await db.raw(
            """
            UPDATE webhook_endpoints SET paused = \(bind: paused ? 1 : 0), updated_at = \(bind: now.millis)
            WHERE name = \(bind: endpoint) RETURNING name
            """
        ).first() != nil
    }

    /// Queues the chosen outbox events again (at most `limit`), after whatever the endpoint has pending; returns how
    /// many. Each replayed event is a new delivery of the same event id.
    public static func replay(_ endpoint: String, _ replay: Replay, limit: Int, now: Date, on db: any SQLDatabase) async throws -> Int {
        let filter: SQLQueryString =
            switch replay {
            case .event(let position): "position = \(bind: position)"
            case .user(let user): "user_id = \(bind: user.rawValue)"
            case .range(let from, let to): "occurred_at >= \(bind: from.millis) AND occurred_at < \(bind: to.millis)"
            }
        let rows = try await db.raw("SELECT position, user_id FROM events WHERE " + filter + " ORDER BY position LIMIT \(bind: limit)").all()
        return try await enqueue(
            try rows.map {
                Enqueued(
                    endpoint: endpoint,
                    key: try $0.decode(column: "user_id", as: String.self),
                    position: try $0.decode(column: "position", as: Int64.self),
                    origin: "replay"
                )
            },
            now: now,
            on: db
        )
    }

    /// Puts the endpoint's dead letters back in line, oldest first; returns how many.
    public static func retryDead(_ endpoint: String, now: Date, on db: any SQLDatabase) async throws -> Int {
        try await db.raw(
            """
            UPDATE webhook_queue SET status = 'pending', attempts = 0, created_at = \(bind: now.millis),
                next_attempt_at = \(bind: now.millis), claimed_until = NULL
            WHERE endpoint = \(bind: endpoint) AND status = 'dead' RETURNING id
            """
        ).all().count
    }

    /// Forgets up to `limit` deliveries acknowledged before `before`; returns how many.
    public static func purgeDelivered(before: Date, limit: Int, on db: any SQLDatabase) async throws -> Int {
        try await db.raw(
            """
            DELETE FROM webhook_queue WHERE id IN (
                SELECT id FROM webhook_queue WHERE status = 'delivered' AND delivered_at < \(bind: before.millis) LIMIT \(bind: limit))
            RETURNING id
            """
        ).all().count
    }
}
