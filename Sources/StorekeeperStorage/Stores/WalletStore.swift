import Foundation
import SQLKit
import StorekeeperCore

/// The coin wallet: an append-only ledger of entries, each keyed by its cause, and a balance per currency.
///
/// Every balance stays within ``WalletLimits/maximumBalance``: the limit is checked in the same statement that
/// moves the balance, written so that the check itself cannot overflow.
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

    /// Adds `amount` (negative to debit) under the unique `cause`, inside the caller's transaction. Throws
    /// `balance_limit` when the balance would leave ``WalletLimits/maximumBalance``.
    static func apply(
        user: UserID, currency: String, amount: Int64, cause: String, reason: String?, allowNegative: Bool, now: Date,
        knownNew: Bool = false, on db: any SQLDatabase
    ) async throws -> Applied {
        guard amount.magnitude <= WalletLimits.maximumBalance.magnitude else { throw WalletLimits.limitReached("an entry of \(amount)") }
        // `knownNew`: the caller's own unique key already proved this cause new; the entry's key still guards it.
        if !knownNew, let existing = try await db.raw(
            "SELECT balance_after, user_id FROM wallet_entries WHERE cause = \(bind: cause)"
        ).first() {
            guard UserID(rawValue: try existing.decode(column: "user_id", as: String.self)) == user else {
                // Causes are built from escaped parts, so this cannot happen; never answer with another user's balance.
                throw StorekeeperError(.internal, code: "ledger_inconsistent", message: "an entry's cause belongs to another user")
            }
            return .duplicate(balance: try existing.decode(column: "balance_after", as: Int64.self))
        }
        let limit = WalletLimits.maximumBalance
        let balance: Int64
        if amount >= 0 || allowNegative {
            // `balance <= limit - amount` rather than `balance + amount <= limit`: neither side can overflow.
            guard
                let row = try await db.raw(
                    """
                    INSERT INTO wallets (user_id, currency, balance) VALUES (\(bind: user.rawValue), \(bind: currency), \(bind: amount))
                    ON CONFLICT (user_id, currency) DO UPDATE SET balance = wallets.balance + excluded.balance
                    WHERE wallets.balance <= \(bind: limit) - excluded.balance AND wallets.balance >= \(bind: -limit) - excluded.balance
                    RETURNING balance
                    """
                ).first()
            else { throw WalletLimits.limitReached("\(user.rawValue) \(currency) \(amount > 0 ? "+" : "")\(amount)") }
            balance = try row.decode(column: "balance", as: Int64.self)
        } else {
            // The balance check and the debit are one statement, so two concurrent spends cannot both pass it.
            guard
                let row = try await db.raw(
                    """
                    UPDATE wallets SET balance = balance + \(bind: amount)
                    WHERE user_id = \(bind: user.rawValue) AND currency = \(bind: currency) AND balance >= \(bind: -amount)
                      AND balance <= \(bind: limit)
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

    /// Spends coins under a client idempotency key; refuses an overdraft. A repeated key returns the first answer,
    /// also when the repeat races the first request (PostgreSQL's unique key then refuses the second insert, and
    /// the stored answer is read instead).
    public func spend(
        user: UserID, currency: String = "coins", amount: Int64, idempotencyKey: String, reason: String?, now: Date = Date()
    ) async throws -> Applied {
        guard amount > 0 && amount <= WalletLimits.maximumAmount else {
            throw StorekeeperError.badRequest("invalid_amount", "amount must be 1-\(WalletLimits.maximumAmount)")
        }
        let cause = WalletCause.spend(user: user, key: idempotencyKey)
        return try await retryingOnRace {
            try await provider.withTransaction { db in
                try await UserStore.ensure(user, now: now, on: db)
                return try await Self.apply(
                    user: user, currency: currency, amount: -amount, cause: cause, reason: reason, allowNegative: false,
                    now: now, on: db)
            }
        }
    }

    /// An admin adjustment (positive or negative, may go below zero), audited with the admin's name.
    public func adjust(
        user: UserID, currency: String = "coins", amount: Int64, idempotencyKey: String, admin: String, reason: String?,
        now: Date = Date()
    ) async throws -> Applied {
        guard amount != 0 && amount.magnitude <= WalletLimits.maximumAmount.magnitude else {
            throw StorekeeperError.badRequest("invalid_amount", "amount must be non-zero and at most ±\(WalletLimits.maximumAmount)")
        }
        let cause = WalletCause.admin(admin, user: user, key: idempotencyKey)
        return try await retryingOnRace {
            try await provider.withTransaction { db in
                try await UserStore.ensure(user, now: now, on: db)
                return try await Self.apply(
                    user: user, currency: currency, amount: amount, cause: cause, reason: reason, allowNegative: true, now: now,
                    on: db)
            }
        }
    }

    /// Runs `body` again once when a concurrent twin committed the same unique key first: the second run finds it.
    private func retryingOnRace<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch where DatabaseFailure.isUniqueViolation(error) {
            return try await body()
        }
    }
}

/// Wallet entry causes. Each is unique in `wallet_entries`, so it is built from escaped parts: `spend:<user>:<key>`
/// with `:` and `%` percent-encoded in each part, and no two (user, key) pairs can spell the same cause. A part
/// without those characters is written as it is, so causes stored before escaping still match their repeats.
public enum WalletCause {
    static func escape(_ part: String) -> String {
        guard part.utf8.contains(where: { $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "%") }) else { return part }
        var escaped = ""
        for scalar in part.unicodeScalars {
            switch scalar {
            case "%": escaped += "%25"
            case ":": escaped += "%3A"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    public static func spend(user: UserID, key: String) -> String { "spend:\(escape(user.rawValue)):\(escape(key))" }

    public static func admin(_ admin: String, user: UserID, key: String) -> String {
        "admin:\(escape(admin)):\(escape(user.rawValue)):\(escape(key))"
    }

    /// One side (`out` or `in`) of moving a guest's balance into an account.
    public static func merge(guest: UserID, into account: UserID, at now: Date, side: String) -> String {
        "merge:\(escape(guest.rawValue)):\(escape(account.rawValue)):\(now.millis):\(side)"
    }
}
