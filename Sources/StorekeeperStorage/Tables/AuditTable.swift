import Foundation
import SQLKit
import StorekeeperCore

/// `audit_entries`: every change to a user's entitlements, wallet or orders, with its cause (invariant 4).
public enum AuditTable {
    /// Appends `entries` in one statement.
    public static func insert(_ entries: [AuditEntry], on db: any SQLDatabase) async throws {
        guard !entries.isEmpty else { return }
        var insert = BulkInsert(
            into: "audit_entries",
            columns: ["user_id", "action", "subject", "amount", "period_start", "period_end", "cause", "detail", "created_at"]
        )
        for entry in entries {
            insert.values([
                entry.user.rawValue, entry.action, entry.subject, entry.amount, entry.periodStart?.millis, entry.periodEnd?.millis,
                entry.cause, entry.detail, entry.createdAt.millis,
            ])
        }
        try await insert.run(on: db)
    }
}
