import Foundation
import StorekeeperCore
import StorekeeperStorage

/// What Apple tells about delivered transactions after the fact — the app install they were bought from, and that a
/// consumable was finished — written through the ledger like every other change, the install audited on its holder.
extension Ledger {
    /// Names the install (`appTransactionId`) of every transaction of `originalTransactionId` that had none (Get App
    /// Transaction Info answered it), audited on each holder; returns how many transactions were named.
    @discardableResult
    public func nameInstall(originalTransactionId: String, appTransactionId: String) async throws -> Int {
        try await write { uow in
            let named = try await StoreTransactionsTable.nameInstall(originalTransactionId, appTransactionId: appTransactionId, on: uow.db)
            for user in Set(named.map(\.user)).sorted() {
                uow.record(
                    AuditEntry(
                        action: .transactionInstallNamed,
                        user: user,
                        subject: originalTransactionId,
                        amount: Int64(named.filter { $0.user == user }.count),
                        cause: .transaction(originalTransactionId),
                        detail: "Apple named the app install these purchases came from: \(appTransactionId)",
                        createdAt: uow.now
                    )
                )
            }
            return named.count
        }
    }

    /// Records why Apple will never name the install of `originalTransactionId`'s transactions (not asked again).
    public func markInstallUnknown(originalTransactionId: String, reason: String) async throws {
        try await write { uow in try await StoreTransactionsTable.markInstallUnknown(originalTransactionId, reason: reason, on: uow.db) }
    }

    /// Records Apple's confirmation that `transactionIds` were finished.
    public func markFinished(_ transactionIds: [String], at date: Date) async throws {
        guard !transactionIds.isEmpty else { return }
        try await write { uow in try await StoreTransactionsTable.markFinished(transactionIds, at: date, on: uow.db) }
    }

    /// Records why Apple will never finish `transactionId` (not asked again).
    public func markUnfinishable(_ transactionId: String, reason: String) async throws {
        try await write { uow in try await StoreTransactionsTable.markUnfinishable(transactionId, reason: reason, on: uow.db) }
    }
}
