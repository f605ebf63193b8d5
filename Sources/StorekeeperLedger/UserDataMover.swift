import Foundation
import StorekeeperCore
import StorekeeperStorage

/// Moves a user's data to another user — every user-keyed table, or one original transaction — audited and
/// announced on both sides. The one implementation behind guest merges and the transfer policy.
enum UserDataMover {
    /// Moves `scope` from `from` to `to`; returns the live grants moved.
    @discardableResult
    static func move(
        from: UserID,
        to: UserID,
        scope: UserDataTables.Scope,
        cause: AuditCause,
        in uow: UnitOfWork
    ) async throws -> [EntitlementGrantsTable.Changed] {
        let grants = try await UserDataTables.liveGrants(of: from, scope: scope, on: uow.db)
        try await UserDataTables.move(from: from, to: to, scope: scope, on: uow.db)
        let what: String =
            switch scope {
            case .everything: "guest"
            case .original(let original): "original transaction \(original)"
            }
        for grant in grants {
            uow.record(
                AuditEntry(
                    action: .entitlementTransferredOut,
                    user: from,
                    subject: grant.entitlement,
                    periodStart: grant.start,
                    periodEnd: grant.end,
                    cause: cause,
                    detail: "\(what): transaction \(grant.transactionId) to \(to.rawValue)",
                    createdAt: uow.now
                )
            )
            uow.record(
                AuditEntry(
                    action: .entitlementTransferredIn,
                    user: to,
                    subject: grant.entitlement,
                    periodStart: grant.start,
                    periodEnd: grant.end,
                    cause: cause,
                    detail: "\(what): transaction \(grant.transactionId) from \(from.rawValue)",
                    createdAt: uow.now
                )
            )
        }
        if case .original(let original) = scope {
            if grants.isEmpty {
                uow.record(
                    AuditEntry(
                        action: .transactionTransferred,
                        user: to,
                        subject: original,
                        cause: cause,
                        detail: "bound to this user instead of \(from.rawValue)",
                        createdAt: uow.now
                    )
                )
            }
            for user in [from, to] {
                uow.emit(
                    LedgerEvent(
                        type: .transferred,
                        user: user,
                        subject: original,
                        occurredAt: uow.now,
                        details: ["from": from.rawValue, "to": to.rawValue]
                    )
                )
            }
        }
        return grants
    }
}
