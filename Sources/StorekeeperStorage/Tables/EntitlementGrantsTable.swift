import Foundation
import SQLKit
import StorekeeperCore

/// `entitlement_grants`: the period (or forever) one transaction entitles its user to an entitlement.
public enum EntitlementGrantsTable {
    /// One grant.
    public struct Row: Sendable {
        public var transactionId: String
        public var user: UserID
        public var entitlement: String
        public var productId: String
        public var productKind: ProductKind
        public var originalTransactionId: String
        public var start: Date
        public var end: Date?
        public var environment: String

        public init(
            transactionId: String,
            user: UserID,
            entitlement: String,
            productId: String,
            productKind: ProductKind,
            originalTransactionId: String,
            start: Date,
            end: Date?,
            environment: String
        ) {
            self.transactionId = transactionId
            self.user = user
            self.entitlement = entitlement
            self.productId = productId
            self.productKind = productKind
            self.originalTransactionId = originalTransactionId
            self.start = start
            self.end = end
            self.environment = environment
        }
    }

    public static func insert(_ rows: [Row], now: Date, on db: any SQLDatabase) async throws {
        guard !rows.isEmpty else { return }
        var insert = BulkInsert(
            into: "entitlement_grants",
            columns: [
                "transaction_id", "user_id", "entitlement", "product_id", "product_kind", "original_transaction_id", "starts_at",
                "ends_at", "environment", "created_at",
            ]
        )
        for row in rows {
            insert.values([
                row.transactionId, row.user.rawValue, row.entitlement, row.productId, row.productKind.rawValue,
                row.originalTransactionId, row.start.millis, row.end?.millis, row.environment, now.millis,
            ])
        }
        try await insert.run(on: db)
    }

    /// The latest end of each user's live passes (non-renewing grants) per entitlement. On PostgreSQL the users'
    /// rows are locked first, so two transactions stacking passes for one user queue up instead of both starting
    /// from the same end.
    public static func passEnds(
        of users: [UserID],
        kind: DatabaseKind,
        on db: any SQLDatabase
    ) async throws
        -> [UserID: [String: Date]]
    {
        guard !users.isEmpty else { return [:] }
        let ids = Set(users).sorted().map(\.rawValue)
        if kind == .postgres {
            try await db.raw("SELECT id FROM users WHERE id IN (\(binds: ids)) ORDER BY id FOR UPDATE").run()
        }
        var ends: [UserID: [String: Date]] = [:]
        for row in try await db.raw(
            """
            SELECT user_id, entitlement, MAX(ends_at) AS pass_end FROM entitlement_grants
            WHERE user_id IN (\(binds: ids)) AND product_kind = 'nonRenewing' AND revoked_at IS NULL
            GROUP BY user_id, entitlement
            """
        ).all() {
            guard let end = try row.decode(column: "pass_end", as: Int64?.self) else { continue }
            ends[UserID(rawValue: try row.decode(column: "user_id", as: String.self)), default: [:]][
                try row.decode(column: "entitlement", as: String.self)
            ] = Date(millis: end)
        }
        return ends
    }

    /// A grant as an update changed it.
    public struct Changed: Sendable {
        public var transactionId: String
        public var user: UserID
        public var entitlement: String
        public var start: Date
        public var end: Date?
    }

    static func changed(_ row: any SQLRow, transactionId: String? = nil, user: UserID? = nil) throws -> Changed {
        Changed(
            transactionId: try transactionId ?? row.decode(column: "transaction_id", as: String.self),
            user: try user ?? UserID(rawValue: row.decode(column: "user_id", as: String.self)),
            entitlement: try row.decode(column: "entitlement", as: String.self),
            start: Date(millis: try row.decode(column: "starts_at", as: Int64.self)),
            end: try row.decode(column: "ends_at", as: Int64?.self).map(Date.init(millis:))
        )
    }

    /// Ends subscription grants where a later transaction of the same subscription starts (an upgrade or a
    /// same-duration crossgrade replaces the current period at once). Only grants ending after `earliestStart` can
    /// overlap one just written, so a renewal that merely follows its predecessor checks one or two rows.
    public static func endReplacedPeriods(originals: [String], overlapping earliestStart: Date, on db: any SQLDatabase) async throws -> [Changed] {
        guard !originals.isEmpty else { return [] }
        let next: SQLQueryString = """
            (SELECT MIN(n.starts_at) FROM entitlement_grants n
             WHERE n.original_transaction_id = entitlement_grants.original_transaction_id
               AND n.starts_at > entitlement_grants.starts_at)
            """
        return try await db.raw(
            "UPDATE entitlement_grants SET ends_at = " + next
                + " WHERE original_transaction_id IN (\(binds: originals)) AND product_kind = 'autoRenewable'"
                + " AND ends_at > \(bind: earliestStart.millis) AND ends_at > " + next
                + " RETURNING transaction_id, user_id, entitlement, starts_at, ends_at"
        ).all().map { try changed($0) }
    }

    /// Extends a transaction's live grant to `end` when that is later (grace period, renewal date extension).
    public static func extend(transactionId: String, to end: Date, on db: any SQLDatabase) async throws -> [Changed] {
        try await db.raw(
            """
            UPDATE entitlement_grants SET ends_at = \(bind: end.millis)
            WHERE transaction_id = \(bind: transactionId) AND ends_at IS NOT NULL AND ends_at < \(bind: end.millis)
              AND revoked_at IS NULL
            RETURNING transaction_id, user_id, entitlement, starts_at, ends_at
            """
        ).all().map { try changed($0) }
    }

    /// Cuts a transaction's live grants from `date` (a refund or revocation).
    /// The grants (by transaction id) of `entitlement` that `user` holds at `date`, not revoked.
    public static func live(user: UserID, entitlement: String, at date: Date, on db: any SQLDatabase) async throws -> [String] {
        try await db.raw(
            """
            SELECT transaction_id FROM entitlement_grants
            WHERE user_id = \(bind: user.rawValue) AND entitlement = \(bind: entitlement) AND revoked_at IS NULL
                AND starts_at <= \(bind: date.millis) AND (ends_at IS NULL OR ends_at > \(bind: date.millis))
            """
        ).all().map { try $0.decode(column: "transaction_id", as: String.self) }
    }

    public static func revoke(transactionId: String, at date: Date, on db: any SQLDatabase) async throws -> [Changed] {
        try await db.raw(
            """
            UPDATE entitlement_grants SET revoked_at = \(bind: date.millis)
            WHERE transaction_id = \(bind: transactionId) AND revoked_at IS NULL
            RETURNING transaction_id, user_id, entitlement, starts_at, ends_at
            """
        ).all().map { try changed($0) }
    }

    /// Restores a transaction's revoked grants (a refund reversed).
    public static func reinstate(transactionId: String, on db: any SQLDatabase) async throws -> [Changed] {
        try await db.raw(
            """
            UPDATE entitlement_grants SET revoked_at = NULL
            WHERE transaction_id = \(bind: transactionId) AND revoked_at IS NOT NULL
            RETURNING transaction_id, user_id, entitlement, starts_at, ends_at
            """
        ).all().map { try changed($0) }
    }

    /// A transaction's grant period (consumption answers).
    public static func period(of transactionId: String, on db: any SQLDatabase) async throws -> (start: Date, end: Date?)? {
        guard
            let row = try await db.raw(
                "SELECT starts_at, ends_at FROM entitlement_grants WHERE transaction_id = \(bind: transactionId)"
            ).first()
        else { return nil }
        return (
            Date(millis: try row.decode(column: "starts_at", as: Int64.self)),
            try row.decode(column: "ends_at", as: Int64?.self).map(Date.init(millis:))
        )
    }
}
