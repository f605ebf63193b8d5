import Foundation
import StorekeeperCore
import StorekeeperStorage

/// Retention answers on the user's audit trail, and the requests already answered.
extension Ledger {
    /// Claims a Retention Messaging request id: `true` the first time, `false` for a replay. Ids seen before
    /// `forgetBefore` are forgotten.
    public func claimRetentionRequest(_ requestId: String, signedAt: Date, forgetBefore: Date) async throws -> Bool {
        try await write { uow in
            try await RetentionRequestsTable.claim(requestId, signedAt: signedAt, forgetBefore: forgetBefore, now: uow.now, on: uow.db)
        }
    }

    /// Records that `user` was shown a retention answer about `originalTransactionId`: on their audit trail, and (with
    /// the rule that gave it) where a retention offer redeemed later finds the answer that offered it.
    public func recordRetentionAnswer(
        user: UserID,
        originalTransactionId: String,
        detail: String,
        rule: (id: String, kind: String, offerId: String?)? = nil
    ) async throws {
        try await write { uow in
            if let rule {
                try await RetentionAnswersTable.insert(
                    originalTransactionId: originalTransactionId,
                    ruleId: rule.id,
                    kind: rule.kind,
                    offerId: rule.offerId,
                    at: uow.now,
                    on: uow.db
                )
            }
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
        }
    }
}
