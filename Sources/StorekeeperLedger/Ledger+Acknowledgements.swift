import Foundation
import StorekeeperCore
import StorekeeperStorage

/// What a store confirms after a delivery — Google Play's acknowledgement or consumption of a purchase — written
/// through the ledger and audited on the purchase's holder.
extension Ledger {
    /// Records the store's confirmation that `transactionId` was acknowledged (or consumed) on `user`'s purchase.
    public func markAcknowledged(_ transactionId: String, user: UserID, action: StoreAcknowledgement.Action) async throws {
        try await write { uow in
            guard try await StoreTransactionsTable.markAcknowledged(transactionId, at: uow.now, on: uow.db) else { return }
            uow.record(
                AuditEntry(
                    action: .transactionAcknowledged,
                    user: user,
                    subject: transactionId,
                    cause: .transaction(transactionId),
                    detail: action == .consume
                        ? "Google Play consumed the purchase: delivered, and the customer can buy it again"
                        : "Google Play acknowledged the purchase: delivered, so Google will not refund it unasked",
                    createdAt: uow.now
                )
            )
        }
    }

    /// Records a failed acknowledgement of `transactionId`; `final` when the store will never take it (audited).
    public func markAcknowledgeFailed(_ transactionId: String, user: UserID, error: String, final: Bool) async throws {
        try await write { uow in
            try await StoreTransactionsTable.markAcknowledgeFailed(transactionId, error: error, final: final, on: uow.db)
            if final {
                uow.record(
                    AuditEntry(
                        action: .transactionAcknowledgementRefused,
                        user: user,
                        subject: transactionId,
                        cause: .transaction(transactionId),
                        detail: "Google Play will not take the acknowledgement: \(error.prefix(200))",
                        createdAt: uow.now
                    )
                )
            }
        }
    }
}
