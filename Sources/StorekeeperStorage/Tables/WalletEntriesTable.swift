import Foundation
import SQLKit
import StorekeeperCore

/// `wallet_entries`: the append-only coin ledger, one entry per ``WalletKey`` (the key, stored as `cause`, is the
/// primary key, which makes every wallet change idempotent).
public enum WalletEntriesTable {
    /// One entry.
    public struct Row: Sendable {
        public var key: WalletKey
        public var user: UserID
        public var currency: String
        public var amount: Int64
        public var balanceAfter: Int64
        public var reason: String?

        public init(key: WalletKey, user: UserID, currency: String, amount: Int64, balanceAfter: Int64, reason: String?) {
            self.key = key
            self.user = user
            self.currency = currency
            self.amount = amount
            self.balanceAfter = balanceAfter
            self.reason = reason
        }
    }

    public static func insert(_ rows: [Row], now: Date, on db: any SQLDatabase) async throws {
        guard !rows.isEmpty else { return }
        var insert = BulkInsert(
            into: "wallet_entries",
            columns: ["cause", "user_id", "currency", "amount", "balance_after", "reason", "created_at"]
        )
        for row in rows {
            insert.values([row.key.rawValue, row.user.rawValue, row.currency, row.amount, row.balanceAfter, row.reason, now.millis])
        }
        try await insert.run(on: db)
    }

    /// The entry with this key: its user, currency, amount and the balance it left.
    public static func find(
        _ key: WalletKey,
        on db: any SQLDatabase
    ) async throws
        -> (user: UserID, currency: String, amount: Int64, balanceAfter: Int64)?
    {
        guard
            let row = try await db.raw(
                "SELECT user_id, currency, amount, balance_after FROM wallet_entries WHERE cause = \(bind: key.rawValue)"
            ).first()
        else { return nil }
        return (
            UserID(rawValue: try row.decode(column: "user_id", as: String.self)), try row.decode(column: "currency", as: String.self),
            try row.decode(column: "amount", as: Int64.self), try row.decode(column: "balance_after", as: Int64.self)
        )
    }
}
