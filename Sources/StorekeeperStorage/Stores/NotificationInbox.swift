import Foundation
import SQLKit
import StorekeeperCore

/// Apple's notifications, stored durably before Apple is answered (invariant 2: nothing lost).
///
/// The key is the V2 `notificationUUID` (V1: `v1:` and the SHA-256 of the body), so a retried or duplicated
/// notification is stored once. Bodies are kept raw; processing state (pending, processed, rejected, dead) and
/// attempts live beside them.
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

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// Stores a verified notification as pending; `false` when it was stored before (a duplicate: answer 200, do
    /// nothing more). Returns only after the commit, so a 200 always follows a durable write.
    public func recordIfNew(_ notification: Received, now: Date = Date()) async throws -> Bool {
        try await insert(notification, status: "pending", error: nil, now: now)
    }

    /// Stores a payload that failed verification, with the reason, for operators (never processed).
    @discardableResult
    public func recordRejected(_ notification: Received, reason: String, now: Date = Date()) async throws -> Bool {
        try await insert(notification, status: "rejected", error: reason, now: now)
    }

    private func insert(_ n: Received, status: String, error: String?, now: Date) async throws -> Bool {
        try await provider.withTransaction { db in
            try await db.raw(
                """
                INSERT INTO notifications (id, format, bundle_id, notification_type, subtype, original_transaction_id,
                    transaction_id, signed_date, environment, body, status, attempts, last_error, received_at, next_attempt_at)
                VALUES (\(bind: n.id), \(bind: n.format), \(bind: n.bundleId), \(bind: n.notificationType), \(bind: n.subtype),
                    \(bind: n.originalTransactionId), \(bind: n.transactionId), \(bind: n.signedDate?.millis),
                    \(bind: n.environment), \(bind: n.body), \(bind: status), 0, \(bind: error), \(bind: now.millis),
                    \(bind: now.millis))
                ON CONFLICT (id) DO NOTHING RETURNING id
                """
            ).first() != nil
        }
    }

    public func find(_ id: String) async throws -> Stored? {
        try await provider.withSession { db in
            try await db.raw("SELECT * FROM notifications WHERE id = \(bind: id)").first().map(Self.stored(from:))
        }
    }

    /// Notifications in `status` (all when `nil`), newest first.
    public func list(status: String? = nil, limit: Int = 100) async throws -> [Stored] {
        try await provider.withSession { db in
            if let status {
                return try await db.raw(
                    "SELECT * FROM notifications WHERE status = \(bind: status) ORDER BY received_at DESC, id LIMIT \(bind: limit)"
                ).all().map(Self.stored(from:))
            }
            return try await db.raw("SELECT * FROM notifications ORDER BY received_at DESC, id LIMIT \(bind: limit)").all()
                .map(Self.stored(from:))
        }
    }

    static func stored(from row: any SQLRow) throws -> Stored {
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
