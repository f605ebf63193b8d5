import Foundation
import SQLKit
import StorekeeperCore

/// `revocations`: each transaction Apple refunded or revoked, whether that still stands (`revoked`) or was reversed
/// (`reinstated`), how many coins it took back, and the `signedDate` of Apple's latest word on it.
public enum RevocationsTable {
    /// A transaction's revocation record.
    public struct Row: Sendable {
        public var user: UserID
        public var productId: String
        public var status: String
        public var generation: Int64
        public var coinsTaken: Int64
        public var decidedAt: Int64
    }

    /// The record, locked for the rest of the transaction on PostgreSQL.
    public static func find(_ transactionId: String, kind: DatabaseKind, on db: any SQLDatabase) async throws -> Row? {
        let lock: SQLQueryString = kind == .postgres ? " FOR UPDATE" : ""
        guard
            let row = try await db.raw(
                "SELECT user_id, product_id, status, generation, coins_taken, decided_at FROM revocations WHERE transaction_id = \(bind: transactionId)"
                    + lock
            ).first()
        else { return nil }
        return Row(
            user: UserID(rawValue: try row.decode(column: "user_id", as: String.self)),
            productId: try row.decode(column: "product_id", as: String.self),
            status: try row.decode(column: "status", as: String.self),
            generation: try row.decode(column: "generation", as: Int64.self),
            coinsTaken: try row.decode(column: "coins_taken", as: Int64.self),
            decidedAt: try row.decode(column: "decided_at", as: Int64.self)
        )
    }

    /// A record to write.
    public struct NewRow: Sendable {
        public var transactionId: String
        public var user: UserID
        public var original: String
        public var productId: String
        public var productKind: String
        public var kind: String
        public var status: String
        public var at: Date
        public var generation: Int64
        public var coinsTaken: Int64
        public var coinsForgiven: Int64
        public var decidedAt: Date

        public init(
            transactionId: String,
            user: UserID,
            original: String,
            productId: String,
            productKind: String,
            kind: String,
            status: String,
            at: Date,
            generation: Int64,
            coinsTaken: Int64,
            coinsForgiven: Int64,
            decidedAt: Date
        ) {
            self.transactionId = transactionId
            self.user = user
            self.original = original
            self.productId = productId
            self.productKind = productKind
            self.kind = kind
            self.status = status
            self.at = at
            self.generation = generation
            self.coinsTaken = coinsTaken
            self.coinsForgiven = coinsForgiven
            self.decidedAt = decidedAt
        }
    }

    /// Writes a record: `replace` overwrites an existing one (a new generation of a revocation), otherwise an
    /// existing record is left alone (a reversal remembered before its refund arrived).
    public static func insert(_ row: NewRow, replace: Bool, now: Date, on db: any SQLDatabase) async throws {
        var insert = BulkInsert(
            into: "revocations",
            columns: [
                "transaction_id", "user_id", "original_transaction_id", "product_id", "product_kind", "kind", "status", "revoked_at",
                "generation", "coins_taken", "coins_forgiven", "decided_at", "updated_at",
            ],
            suffix: replace
                ? """
                ON CONFLICT (transaction_id) DO UPDATE SET kind = excluded.kind, status = excluded.status,
                    revoked_at = excluded.revoked_at, generation = excluded.generation, coins_taken = excluded.coins_taken,
                    coins_forgiven = excluded.coins_forgiven, decided_at = excluded.decided_at, updated_at = excluded.updated_at
                """ : "ON CONFLICT (transaction_id) DO NOTHING"
        )
        insert.values([
            row.transactionId, row.user.rawValue, row.original, row.productId, row.productKind, row.kind, row.status, row.at.millis,
            row.generation, row.coinsTaken, row.coinsForgiven, row.decidedAt.millis, now.millis,
        ])
        try await insert.run(on: db)
    }

    /// Marks a revocation reversed as of `decidedAt`.
    public static func markReinstated(_ transactionId: String, decidedAt: Date, now: Date, on db: any SQLDatabase) async throws {
        try await db.raw(
            """
            UPDATE revocations SET status = 'reinstated', decided_at = \(bind: decidedAt.millis), updated_at = \(bind: now.millis)
            WHERE transaction_id = \(bind: transactionId)
            """
        ).run()
    }
}
