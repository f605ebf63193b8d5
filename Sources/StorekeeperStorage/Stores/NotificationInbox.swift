import Foundation
import SQLKit
import StorekeeperCore

/// Apple's notifications, stored durably before Apple is answered (invariant 2: nothing lost).
///
/// The key is the V2 `notificationUUID` (V1: `v1:` and the SHA-256 of the body), so a retried or duplicated
/// notification is stored once. Bodies are kept exactly as received — verified V2 bodies with their shared
/// certificate chains factored out (``CompactNotificationBody``), everything else raw — and processing state
/// (pending, processed, rejected, dead) and attempts live beside them.
public struct NotificationInbox: Sendable {
    /// One notification as received.
    public struct Received: Sendable, Hashable {
        public var id: String
        public var format: String
        public var bundleId: String?
        public var notificationType: String?
        public var subtype: String?
        public var originalTransactionId: String?
        public var transactionId: String?
        public var signedDate: Date?
        public var environment: String?
        public var body: String
        /// `body` in its stored form, when the caller compacted it already (off the writer's path); otherwise the
        /// insert compacts it.
        public var compactBody: CompactNotificationBody?

        public init(
            id: String, format: String, bundleId: String?, notificationType: String?, subtype: String?,
            originalTransactionId: String?, transactionId: String?, signedDate: Date?, environment: String?, body: String
        ) {
            self.id = id
            self.format = format
            self.bundleId = bundleId
            self.notificationType = notificationType
            self.subtype = subtype
            self.originalTransactionId = originalTransactionId
            self.transactionId = transactionId
            self.signedDate = signedDate
            self.environment = environment
            self.body = body
        }
    }

    /// A stored notification and its processing state.
    public struct Stored: Sendable, Hashable {
        public var received: Received
        public var status: String
        public var attempts: Int
        public var lastError: String?
        public var receivedAt: Date
    }

    let provider: any DatabaseProvider
    private let batcher: BatchCombiner<Received, Result<Bool, any Error>>

    public init(provider: any DatabaseProvider) {
        self.provider = provider
        batcher = BatchCombiner(maximumBatch: 256) { batch in await Self.insertBatch(batch, provider: provider) }
    }

    /// Stores a verified notification as pending; `false` when it was stored before (a duplicate: answer 200, do
    /// nothing more). Returns only after the commit, so a 200 always follows a durable write.
    ///
    /// Concurrent calls share one transaction and one multi-row insert (the key still decides, row by row, what
    /// is new), so a burst of notifications costs one durable commit, not one each.
    public func recordIfNew(_ notification: Received, now: Date = Date()) async throws -> Bool {
        try await batcher.submit(notification).get()
    }

    private static func insertBatch(_ batch: [Received], provider: any DatabaseProvider) async -> [Result<Bool, any Error>] {
        do {
            let inserted = try await provider.withTransaction { db in try await insertRows(batch, now: Date(), on: db) }
            return Self.firstOccurrences(batch.map(\.id), inserted: inserted).map { .success($0) }
        } catch {
            return batch.map { _ in .failure(error) }
        }
    }

    /// Inserts pending notifications inside the caller's transaction with one multi-row statement; returns the
    /// ids that were new.
    ///
    /// Rows in `processed` go in as already processed: the caller applies them in this same transaction, so the
    /// row never needs rewriting (in SQLite an update rewrites the whole row, body included). Headers in
    /// `storedHeaders` are known to be committed already and are not written again.
    public static func insertRows(
        _ batch: [Received], processed: Set<String> = [], storedHeaders: Set<String> = [], now: Date, on db: any SQLDatabase
    ) async throws -> Set<String> {
        guard !batch.isEmpty else { return [] }
        var insert = BulkInsert(
            into: "notifications",
            columns: [
                "id", "format", "bundle_id", "notification_type", "subtype", "original_transaction_id", "transaction_id",
                "signed_date", "environment", "body", "status", "attempts", "received_at", "next_attempt_at", "body_format",
                "processed_at",
            ], suffix: "ON CONFLICT (id) DO NOTHING RETURNING id")
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
            ] as [any Encodable & Sendable])
        }
        try await storeHeaders(headers, on: db)
        let rows = try await insert.all(on: db)
        return Set(try rows.map { try $0.decode(column: "id", as: String.self) })
    }

    /// Stores the JWS headers compacted bodies refer to (the same few chains, so almost always already there).
    static func storeHeaders(_ headers: [String: String], on db: any SQLDatabase) async throws {
        guard !headers.isEmpty else { return }
        let insert = db.insert(into: "notification_headers").columns("digest", "header")
        for (digest, header) in headers.sorted(by: { $0.key < $1.key }) { insert.values(digest, header) }
        try await insert.ignoringConflicts(with: ["digest"]).run()
    }

    /// Per id of a batch, whether it is new: the first occurrence of an inserted id (two identical notifications
    /// in one batch: the first is new, the second a duplicate).
    public static func firstOccurrences(_ ids: [String], inserted: Set<String>) -> [Bool] {
        var claimed = Set<String>()
        return ids.map { inserted.contains($0) && claimed.insert($0).inserted }
    }

    /// Claims up to `limit` due notifications for processing, oldest `signedDate` first, leased for `lease`
    /// so a crashed processor's claims come back. Several processes may claim at once on PostgreSQL: rows locked by
    /// another claimer are skipped, never waited for.
    public func claim(limit: Int, lease: Duration, now: Date = Date()) async throws -> [Stored] {
        let skipLocked: SQLQueryString = provider.kind == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        let until = now.addingTimeInterval(Double(lease.components.seconds)).millis
        return try await provider.withTransaction { db in
            let rows = try await db.raw(
                """
                UPDATE notifications SET claimed_until = \(bind: until), attempts = attempts + 1
                WHERE id IN (
                    SELECT id FROM notifications
                    WHERE status = 'pending' AND next_attempt_at <= \(bind: now.millis)
                      AND (claimed_until IS NULL OR claimed_until < \(bind: now.millis))
                    ORDER BY signed_date, received_at LIMIT \(bind: limit)
                """ + skipLocked + ") RETURNING *"
            ).all()
            return try await Self.stored(from: rows, on: db).sorted {
                ($0.received.signedDate ?? $0.receivedAt, $0.received.id) < ($1.received.signedDate ?? $1.receivedAt, $1.received.id)
            }
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

    /// Records a failed attempt: retried after `retryAfter`, or a dead letter (kept with its error for operators)
    /// once `attempts` reaches `maxAttempts`.
    public func markFailed(_ id: String, error: String, maxAttempts: Int, retryAfter: Duration, now: Date = Date()) async throws {
        let next = now.addingTimeInterval(Double(retryAfter.components.seconds)).millis
        try await provider.withSession { db in
            try await db.raw(
                """
                UPDATE notifications SET claimed_until = NULL, last_error = \(bind: String(error.prefix(2000))),
                    next_attempt_at = \(bind: next),
                    status = CASE WHEN attempts >= \(bind: maxAttempts) THEN 'dead' ELSE 'pending' END
                WHERE id = \(bind: id) AND status = 'pending'
                """
            ).run()
        }
    }

    /// Puts a dead letter (or a pending notification) back in line now; returns false when there is no such
    /// notification or it was processed or rejected.
    public func retry(_ id: String, now: Date = Date()) async throws -> Bool {
        try await provider.withSession { db in
            try await db.raw(
                """
                UPDATE notifications SET status = 'pending', attempts = 0, next_attempt_at = \(bind: now.millis),
                    claimed_until = NULL
                WHERE id = \(bind: id) AND status IN ('dead', 'pending') RETURNING id
                """
            ).first() != nil
        }
    }

    /// How many pending notifications are due at `now` (claimed or not).
    public func dueCount(now: Date = Date()) async throws -> Int {
        try await provider.withSession { db in
            Int(
                try await db.raw(
                    "SELECT COUNT(*) AS n FROM notifications WHERE status = 'pending' AND next_attempt_at <= \(bind: now.millis)"
                ).first()?.decode(column: "n", as: Int64.self) ?? 0)
        }
    }

    /// How many notifications are in each status.
    public func counts() async throws -> [String: Int] {
        try await provider.withSession { db in
            var counts: [String: Int] = [:]
            for row in try await db.raw("SELECT status, COUNT(*) AS n FROM notifications GROUP BY status").all() {
                counts[try row.decode(column: "status", as: String.self)] = Int(try row.decode(column: "n", as: Int64.self))
            }
            return counts
        }
    }

    /// The newest `signedDate` of any stored notification of `bundleId` (where catch-up resumes).
    public func latestSignedDate(bundleId: String) async throws -> Date? {
        try await provider.withSession { db in
            try await db.raw(
                "SELECT MAX(signed_date) AS latest FROM notifications WHERE bundle_id = \(bind: bundleId) AND format = 'v2'"
            ).first()?.decode(column: "latest", as: Int64?.self).map(Date.init(millis:))
        }
    }

    public func find(_ id: String) async throws -> Stored? {
        try await provider.withSession { db in
            try await Self.stored(from: db.raw("SELECT * FROM notifications WHERE id = \(bind: id)").all(), on: db).first
        }
    }

    /// Notifications in `status` (all when `nil`), newest first.
    public func list(status: String? = nil, limit: Int = 100) async throws -> [Stored] {
        try await provider.withSession { db in
            if let status {
                return try await Self.stored(
                    from: db.raw(
                        "SELECT * FROM notifications WHERE status = \(bind: status) ORDER BY received_at DESC, id LIMIT \(bind: limit)"
                    ).all(), on: db)
            }
            return try await Self.stored(
                from: db.raw("SELECT * FROM notifications ORDER BY received_at DESC, id LIMIT \(bind: limit)").all(), on: db)
        }
    }

    /// Stored notifications from `rows`, compacted bodies expanded with the headers they refer to.
    static func stored(from rows: [any SQLRow], on db: any SQLDatabase) async throws -> [Stored] {
        var stored = try rows.map { try (Self.stored(from: $0), $0.decode(column: "body_format", as: String?.self)) }
        var digests = Set<String>()
        for (notification, format) in stored where format != nil {
            guard format == CompactNotificationBody.format else {
                throw CompactNotificationBody.Malformed(reason: "unknown body format \(format ?? "")")
            }
            digests.formUnion(CompactNotificationBody.references(in: notification.received.body))
        }
        guard !digests.isEmpty else { return stored.map(\.0) }
        var headers: [String: String] = [:]
        for row in try await db.raw("SELECT digest, header FROM notification_headers WHERE digest IN (\(binds: digests.sorted()))").all() {
            headers[try row.decode(column: "digest", as: String.self)] = try row.decode(column: "header", as: String.self)
        }
        for index in stored.indices where stored[index].1 != nil {
            stored[index].0.received.body = try CompactNotificationBody.expand(stored[index].0.received.body, headers: headers)
        }
        return stored.map(\.0)
    }

    private static func stored(from row: any SQLRow) throws -> Stored {
        Stored(
            received: Received(
                id: try row.decode(column: "id", as: String.self), format: try row.decode(column: "format", as: String.self),
                bundleId: try row.decode(column: "bundle_id", as: String?.self),
                notificationType: try row.decode(column: "notification_type", as: String?.self),
                subtype: try row.decode(column: "subtype", as: String?.self),
                originalTransactionId: try row.decode(column: "original_transaction_id", as: String?.self),
                transactionId: try row.decode(column: "transaction_id", as: String?.self),
                signedDate: try row.decode(column: "signed_date", as: Int64?.self).map(Date.init(millis:)),
                environment: try row.decode(column: "environment", as: String?.self),
                body: try row.decode(column: "body", as: String.self)),
            status: try row.decode(column: "status", as: String.self),
            attempts: Int(try row.decode(column: "attempts", as: Int64.self)),
            lastError: try row.decode(column: "last_error", as: String?.self),
            receivedAt: Date(millis: try row.decode(column: "received_at", as: Int64.self)))
    }
}
