import Foundation
import StorekeeperCore
import StorekeeperStorage

/// Retention answers on the user's audit trail.
extension Ledger {
    /// Records that `user` was shown a retention answer about `originalTransactionId`.
    public func recordRetentionAnswer(user: UserID, originalTransactionId: String, detail: String) async throws {
        try await write { uow in
            uow.record(
                AuditEntry(
                    action: .retentionAnswered,
                    user: user,
                    subject: originalTransactionId,
                    cause: .transaction(originalTransactionId),
                    detail: detail,
                    createdAt: uow.now
                )
            )
            try await uow.flush()
        }
    }
}
