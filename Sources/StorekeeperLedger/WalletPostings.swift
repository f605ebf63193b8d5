import Foundation
import StorekeeperCore
import StorekeeperStorage

/// The result of posting one wallet entry.
public enum WalletPosting: Sendable, Hashable {
    /// Posted now; the balance after it.
    case applied(balance: Int64)
    /// An entry with this cause exists already (an idempotent repeat); the balance it left.
    case duplicate(balance: Int64)
    /// A debit larger than the balance, refused.
    case insufficientFunds(balance: Int64)
}

/// Posts single entries to the coin ledger (spends, adjustments, clawbacks, reversals, merges): the balance, the
/// entry keyed by its cause, the audit entry and the `wallet.changed` event, in the caller's unit of work.
enum WalletPostings {
    /// Adds `amount` (negative to debit) under the unique `key`. Throws `balance_limit` when the balance would
    /// leave ``WalletLimits/maximumBalance``.
    static func post(
        user: UserID,
        currency: String,
        amount: Int64,
        key: WalletKey,
        reason: String?,
        allowNegative: Bool,
        in uow: UnitOfWork
    ) async throws -> WalletPosting {
        guard amount.magnitude <= WalletLimits.maximumBalance.magnitude else { throw WalletLimits.limitReached("an entry of \(amount)") }
        if let existing = try await WalletEntriesTable.find(key, on: uow.db) {
            guard existing.user == user else {
                // Causes are built from escaped parts, so this cannot happen; never answer with another user's balance.
                throw LedgerError.inconsistent("an entry's cause belongs to another user")
            }
            return .duplicate(balance: existing.balanceAfter)
        }
        let balance: Int64
        if amount >= 0 || allowNegative {
            guard let after = try await WalletsTable.add([(user, amount)], currency: currency, on: uow.db)[user] else {
                throw WalletLimits.limitReached("\(user.rawValue) \(currency) \(amount > 0 ? "+" : "")\(amount)")
            }
            balance = after
        } else {
            guard let after = try await WalletsTable.debit(user, currency: currency, amount: -amount, on: uow.db) else {
                return .insufficientFunds(
                    balance: try await WalletsTable.balance(user, currency: currency, lock: false, kind: uow.kind, on: uow.db)
                )
            }
            balance = after
        }
        try await WalletEntriesTable.insert(
            [.init(key: key, user: user, currency: currency, amount: amount, balanceAfter: balance, reason: reason)],
            now: uow.now,
            on: uow.db
        )
        uow.record(
            AuditEntry(
                action: .wallet(amount),
                user: user,
                subject: currency,
                amount: amount,
                cause: .wallet(key),
                detail: reason,
                createdAt: uow.now
            )
        )
        uow.emit(
            LedgerEvent(
                type: .walletChanged,
                user: user,
                subject: currency,
                occurredAt: uow.now,
                details: ["amount": String(amount), "balance": String(balance), "cause": key.rawValue, "reason": reason ?? ""]
            )
        )
        return .applied(balance: balance)
    }
}
