import Foundation
import SQLKit
import StorekeeperCore

/// Reads Apple's notifications, which the ledger stores durably before Apple is answered (invariant 2: nothing lost).
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
            id: String,
            format: String,
            bundleId: String?,
            notificationType: String?,
            subtype: String?,
            originalTransactionId: String?,
            transactionId: String?,
            signedDate: Date?,
            environment: String?,
            body: String
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

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// How many pending notifications are due at `now` (claimed or not).
    public func dueCount(now: Date = Date()) async throws -> Int {
        try await provider.withSession { db in try await LeasedQueue.notifications.dueCount(now: now, on: db) }
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
                    ).all(),
                    on: db
                )
            }
            return try await Self.stored(
                from: db.raw("SELECT * FROM notifications ORDER BY received_at DESC, id LIMIT \(bind: limit)").all(),
                on: db
            )
        }
    }

    /// The notification `id` if it is a dead letter about an original transaction: that transaction and Apple's type.
    public static func deadLetter(
        _ id: String,
        on db: any SQLDatabase
    ) async throws -> (originalTransactionId: String, type: String?, subtype: String?)? {
        guard
            let row = try await db.raw(
                "SELECT status, original_transaction_id, notification_type, subtype FROM notifications WHERE id = \(bind: id)"
            ).first(),
            try row.decode(column: "status", as: String.self) == "dead",
            let original = try row.decode(column: "original_transaction_id", as: String?.self)
        else { return nil }
        return (original, try row.decode(column: "notification_type", as: String?.self), try row.decode(column: "subtype", as: String?.self))
    }

    /// What the console's inbox list narrows to; nil fields do not filter.
    public struct Filter: Sendable, Hashable {
        public var status: String
        /// Apple's `notificationType` (V2) or `notification_type` (V1), exactly.
        public var type: String?
        /// Received at or after.
        public var from: Date?
        /// Received before.
        public var to: Date?
        /// About this original transaction.
        public var originalTransactionId: String?

        public init(status: String, type: String? = nil, from: Date? = nil, to: Date? = nil, originalTransactionId: String? = nil) {
            self.status = status
            self.type = type
            self.from = from
            self.to = to
            self.originalTransactionId = originalTransactionId
        }
    }

    /// Notifications matching `filter`, newest received first (walks `notifications_by_received`).
    public func list(_ filter: Filter, limit: Int = 100) async throws -> [Stored] {
        try await provider.withSession { db in
            var query: SQLQueryString = "SELECT * FROM notifications WHERE status = \(bind: filter.status)"
            if let type = filter.type { query = query + " AND notification_type = \(bind: type)" }
            if let from = filter.from { query = query + " AND received_at >= \(bind: from.millis)" }
            if let to = filter.to { query = query + " AND received_at < \(bind: to.millis)" }
            if let original = filter.originalTransactionId { query = query + " AND original_transaction_id = \(bind: original)" }
            query = query + " ORDER BY received_at DESC, id LIMIT \(bind: limit)"
            return try await Self.stored(from: db.raw(query).all(), on: db)
        }
    }

    /// Stored notifications from `rows`, compacted bodies expanded with the headers they refer to.
    public static func stored(from rows: [any SQLRow], on db: any SQLDatabase) async throws -> [Stored] {
        var stored = try rows.map { try (Self.stored(from: $0), $0.decode(column: "body_format", as: String?.self)) }
        var digests = Set<String>()
        for (notification, format) in stored where format != nil {
            guard format == CompactNotificationBody.format else {
                throw CompactNotificationBody.Malformed(reason: "unknown body format \(format ?? "")")
            }
            digests.formUnion(CompactNotificationBody.references(in: notification.received.body))
        }
        guard !digests.isEmpty else { return stored.map(\.0) }
        let headers = try await NotificationHeadersTable.find(digests, on: db)
        for index in stored.indices where stored[index].1 != nil {
            stored[index].0.received.body = try CompactNotificationBody.expand(stored[index].0.received.body, headers: headers)
        }
        return stored.map(\.0)
    }

    private static func stored(from row: any SQLRow) throws -> Stored {
        Stored(
            received: Received(
                id: try row.decode(column: "id", as: String.self),
                format: try row.decode(column: "format", as: String.self),
                bundleId: try row.decode(column: "bundle_id", as: String?.self),
                notificationType: try row.decode(column: "notification_type", as: String?.self),
                subtype: try row.decode(column: "subtype", as: String?.self),
                originalTransactionId: try row.decode(column: "original_transaction_id", as: String?.self),
                transactionId: try row.decode(column: "transaction_id", as: String?.self),
                signedDate: try row.decode(column: "signed_date", as: Int64?.self).map(Date.init(millis:)),
                environment: try row.decode(column: "environment", as: String?.self),
                body: try row.decode(column: "body", as: String.self)
            ),
            status: try row.decode(column: "status", as: String.self),
            attempts: Int(try row.decode(column: "attempts", as: Int64.self)),
            lastError: try row.decode(column: "last_error", as: String?.self),
            receivedAt: Date(millis: try row.decode(column: "received_at", as: Int64.self))
        )
    }
}
