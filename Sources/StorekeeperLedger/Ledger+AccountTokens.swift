import Foundation
import StorekeeperCore
import StorekeeperStorage

/// Users' own app account tokens, and Apple's confirmations that a purchase carries one (Set App Account Token).
extension Ledger {
    /// Gives each of `users` that has none a token of its own (random, kept for good); returns their tokens.
    public func ensureAccountTokens(_ users: Set<UserID>) async throws -> [UserID: String] {
        guard !users.isEmpty else { return [:] }
        return try await write { uow in try await AccountTokensTable.ensureUserTokens(users, on: uow.db) }
    }

    /// Records that Apple set `token` on `originalTransactionId` for `user`, audited on the user; nothing when the
    /// purchase moved to another user meanwhile (its token is set again for the new one).
    @discardableResult
    public func confirmAccountToken(originalTransactionId: String, user: UserID, token: String) async throws -> Bool {
        try await write { uow in
            guard try await AccountTokensTable.markSet(originalTransactionId, user: user, token: token, now: uow.now, on: uow.db) else {
                return false
            }
            uow.record(
                AuditEntry(
                    action: .transactionAccountTokenSet,
                    user: user,
                    subject: originalTransactionId,
                    cause: .transaction(originalTransactionId),
                    detail:
                        "app account token \(token) set at Apple: the purchase came without one; its renewals and notifications now name this user",
                    createdAt: uow.now
                )
            )
            return true
        }
    }

    /// Records why Apple will never take a token for `originalTransactionId`.
    public func refuseAccountToken(originalTransactionId: String, reason: String) async throws {
        try await write { uow in try await AccountTokensTable.markRefused(originalTransactionId, reason: reason, on: uow.db) }
    }
}
