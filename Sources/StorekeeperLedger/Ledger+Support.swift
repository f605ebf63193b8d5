import Foundation
import StorekeeperCore
import StorekeeperStorage

/// What support does by hand to a customer's entitlements, each audited with the operator and the reason and
/// announced in the outbox like any other change.
extension Ledger {
    /// Grants `entitlement` to `user` from now until `until` (nil: for good), with no Apple transaction behind it:
    /// the grant is keyed `support:<uuid>`. Returns that key.
    public func grantEntitlement(user: UserID, entitlement: String, until: Date?, admin: String, reason: String) async throws -> String {
        let grant = "support:" + UUID().uuidString.lowercased()
        return try await write { uow in
            if let until, until <= uow.now {
                throw SupportError.grantEndsInPast
            }
            try await UsersTable.ensure([user], now: uow.now, on: uow.db)
            try await EntitlementGrantsTable.insert(
                [
                    EntitlementGrantsTable.Row(
                        transactionId: grant,
                        user: user,
                        entitlement: entitlement,
                        productId: "support",
                        productKind: until == nil ? .nonConsumable : .nonRenewing,
                        originalTransactionId: grant,
                        start: uow.now,
                        end: until,
                        environment: "Production"
                    )
                ],
                now: uow.now,
                on: uow.db
            )
            uow.record(
                AuditEntry(
                    action: .entitlementGranted,
                    user: user,
                    subject: entitlement,
                    periodStart: uow.now,
                    periodEnd: until,
                    cause: .admin(admin),
                    detail: "granted by support (\(grant)): \(reason)",
                    createdAt: uow.now
                )
            )
            uow.emit(
                LedgerEvent(
                    type: .entitlementChanged,
                    user: user,
                    subject: entitlement,
                    occurredAt: uow.now,
                    details: ["change": "granted", "grant": grant, "endsAt": until.map { String($0.millis) } ?? "", "reason": reason]
                )
            )
            return grant
        }
    }

    /// Revokes from now every live grant of `entitlement` that `user` holds (from Apple's transactions or from
    /// support). Returns how many grants were revoked; `entitlement_not_active` when there were none.
    public func revokeEntitlement(user: UserID, entitlement: String, admin: String, reason: String) async throws -> Int {
        try await write { uow in
            var revoked = 0
            for grant in try await EntitlementGrantsTable.live(user: user, entitlement: entitlement, at: uow.now, on: uow.db) {
                let changed = try await EntitlementGrantsTable.revoke(transactionId: grant, at: uow.now, on: uow.db)
                revoked += changed.count
                for change in changed {
                    uow.record(
                        AuditEntry(
                            action: .entitlementRevoked,
                            user: user,
                            subject: change.entitlement,
                            periodStart: change.start,
                            periodEnd: uow.now,
                            cause: .admin(admin),
                            detail: "revoked by support (\(change.transactionId)): \(reason)",
                            createdAt: uow.now
                        )
                    )
                }
            }
            // Nothing to revoke is a refusal, so an operator's log line bound to this write rolls back with it.
            guard revoked > 0 else {
                throw SupportError.entitlementNotActive(entitlement, user: user)
            }
            uow.emit(
                LedgerEvent(
                    type: .entitlementChanged,
                    user: user,
                    subject: entitlement,
                    occurredAt: uow.now,
                    details: ["change": "revoked", "grants": String(revoked), "reason": reason]
                )
            )
            return revoked
        }
    }
}
