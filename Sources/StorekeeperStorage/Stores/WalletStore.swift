import Foundation
import SQLKit
import StorekeeperCore

/// The coin wallet: an append-only ledger of entries, each keyed by its cause, and a balance per currency.
public struct WalletStore: Sendable {
    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// The result of applying one entry.
    public enum Applied: Sendable, Hashable {
        /// Applied now; the balance after it.
        case applied(balance: Int64)
        /// An entry with this cause exists already (an idempotent repeat); the balance it left.
        case duplicate(balance: Int64)
        /// A debit larger than the balance, refused.
        case insufficientFunds(balance: Int64)
    }

    /// Adds `amount` (negative to debit) under the unique `cause`, inside the caller's transaction.
    static func apply(
        user: UserID, currency: String, amount: Int64, cause: String, reason: String?, allowNegative: Bool, now: Date,
        knownNew: Bool = false, on db: any SQLDatabase
    ) async throws -> Applied {
        // `knownNew`: the caller's own unique key already proved this cause new; the entry's key still guards it.
        if !knownNew, let existing = try await db.raw(
            "SELECT balance_after FROM wallet_entries WHERE cause = \(bind: cause)"
        ).first() {
            return .duplicate(balance: try existing.decode(column: "balance_after", as: Int64.self))
        }
        let balance: Int64
        if amount >= 0 || allowNegative {
            let row = try await db.raw(
                """
                INSERT INTO wallets (user_id, currency, balance) VALUES (\(bind: user.rawValue), \(bind: currency), \(bind: amount))
                ON CONFLICT (user_id, currency) DO UPDATE SET balance = wallets.balance + excluded.balance
                RETURNING balance
                """
            ).first()
            balance = try row?.decode(column: "balance", as: Int64.self) ?? amount
        } else {
            // The balance check and the debit are one statement, so two concurrent spends cannot both pass it.
            guard
                let row = try await db.raw(
                    """
                    UPDATE wallets SET balance = balance + \(bind: amount)
                    WHERE user_id = \(bind: user.rawValue) AND currency = \(bind: currency) AND balance >= \(bind: -amount)
                    RETURNING balance
                    """
                ).first()
            else {
                let current = try await db.raw(
                    "SELECT balance FROM wallets WHERE user_id = \(bind: user.rawValue) AND currency = \(bind: currency)"
                ).first()
                return .insufficientFunds(balance: try current?.decode(column: "balance", as: Int64.self) ?? 0)
            }
            balance = try row.decode(column: "balance", as: Int64.self)
        }
        try await db.raw(
            """
            INSERT INTO wallet_entries (cause, user_id, currency, amount, balance_after, reason, created_at)
            VALUES (\(bind: cause), \(bind: user.rawValue), \(bind: currency), \(bind: amount), \(bind: balance), \(bind: reason), \(bind: now.millis))
            """
        ).run()
        try await AuditStore.append(
            AuditEntry(
                action: amount >= 0 ? "wallet.credited" : "wallet.debited", user: user, subject: currency, amount: amount,
                cause: cause, detail: reason, createdAt: now), on: db)
        return .applied(balance: balance)
    }

    /// Spends coins under a client idempotency key; refuses an overdraft. A repeated key returns the first answer.
    public func spend(
        user: UserID, currency: String = "coins", amount: Int64, idempotencyKey: String, reason: String?, now: Date = Date()
    ) async throws -> Applied {
        precondition(amount > 0)
        return try await provider.withTransaction { db in
            try await UserStore.ensure(user, now: now, on: db)
            return try await Self.apply(
                user: user, currency: currency, amount: -amount, cause: "spend:\(user.rawValue):\(idempotencyKey)",
                reason: reason, allowNegative: false, now: now, on: db)
        }
    }

    /// An admin adjustment (positive or negative, may go below zero), audited with the admin's name.
    public func adjust(
        user: UserID, currency: String = "coins", amount: Int64, idempotencyKey: String, admin: String, reason: String?,
        now: Date = Date()
    ) async throws -> Applied {
        try await provider.withTransaction { db in
            try await UserStore.ensure(user, now: now, on: db)
            return try await Self.apply(
                user: user, currency: currency, amount: amount, cause: "admin:\(admin):\(user.rawValue):\(idempotencyKey)",
                reason: reason, allowNegative: true, now: now, on: db)
        }
    }
}
