import Foundation
import SQLKit
import StorekeeperCore

/// `wallets`: one balance per user and currency, always within ``WalletLimits/maximumBalance``.
public enum WalletsTable {
    /// Adds each amount to its balance (creating the wallet), refusing a change that would pass the limit; returns
    /// the balances after, per user. A user missing from the answer was refused.
    ///
    /// The limit is written `balance <= limit - amount` rather than `balance + amount <= limit`: neither side can
    /// overflow, whatever the stored balance. Amounts must be within ±``WalletLimits/maximumBalance``.
    public static func add(
        _ amounts: [(user: UserID, amount: Int64)],
        currency: String,
        on db: any SQLDatabase
    ) async throws -> [UserID: Int64] {
        guard !amounts.isEmpty else { return [:] }
        let limit = WalletLimits.maximumBalance
        var insert = BulkInsert(
            into: "wallets",
            columns: ["user_id", "currency", "balance"],
            suffix: """
                ON CONFLICT (user_id, currency) DO UPDATE SET balance = wallets.balance + excluded.balance
                WHERE wallets.balance <= \(limit) - excluded.balance AND wallets.balance >= \(-limit) - excluded.balance
                RETURNING user_id, balance
                """
        )
        for (user, amount) in amounts.sorted(by: { $0.user < $1.user }) { insert.values([user.rawValue, currency, amount]) }
        var balances: [UserID: Int64] = [:]
        for row in try await insert.all(on: db) {
            balances[UserID(rawValue: try row.decode(column: "user_id", as: String.self))] = try row.decode(column: "balance", as: Int64.self)
        }
        return balances
    }

    /// Takes `amount` (positive) from the balance only if the balance covers it; the balance after, or nil.
    /// The check and the debit are one statement, so two concurrent debits cannot both pass it.
    public static func debit(_ user: UserID, currency: String, amount: Int64, on db: any SQLDatabase) async throws -> Int64? {
        try await db.raw(
            """
            UPDATE wallets SET balance = balance - \(bind: amount)
            WHERE user_id = \(bind: user.rawValue) AND currency = \(bind: currency) AND balance >= \(bind: amount)
              AND balance <= \(bind: WalletLimits.maximumBalance)
            RETURNING balance
            """
        ).first()?.decode(column: "balance", as: Int64.self)
    }

    /// The balance, 0 for a wallet never used; on PostgreSQL the row is locked for the rest of the transaction.
    public static func balance(_ user: UserID, currency: String, lock: Bool, kind: DatabaseKind, on db: any SQLDatabase) async throws -> Int64 {
        let suffix: SQLQueryString = lock && kind == .postgres ? " FOR UPDATE" : ""
        return try await db.raw(
            "SELECT balance FROM wallets WHERE user_id = \(bind: user.rawValue) AND currency = \(bind: currency)" + suffix
        ).first()?.decode(column: "balance", as: Int64.self) ?? 0
    }

    /// Every non-zero balance of `user`.
    public static func balances(of user: UserID, on db: any SQLDatabase) async throws -> [(currency: String, balance: Int64)] {
        try await db.raw(
            "SELECT currency, balance FROM wallets WHERE user_id = \(bind: user.rawValue) AND balance <> 0 ORDER BY currency"
        ).all().map { (try $0.decode(column: "currency", as: String.self), try $0.decode(column: "balance", as: Int64.self)) }
    }
}
