import Foundation
import SQLKit
import StorekeeperCore

/// `health_probes`: one row per process, written by `/health` to prove the database takes a write.
public enum HealthProbesTable {
    /// Writes this process's row; on PostgreSQL a lock is waited for two seconds at most (the caller's transaction
    /// is the probe's own).
    public static func touch(instance: String, now: Date, kind: DatabaseKind, on db: any SQLDatabase) async throws {
        if kind == .postgres { try await db.raw("SET LOCAL lock_timeout = '2s'").run() }
        var insert = BulkInsert(
            into: "health_probes",
            columns: ["instance", "checked_at"],
            suffix: "ON CONFLICT (instance) DO UPDATE SET checked_at = excluded.checked_at"
        )
        insert.values([instance, now.millis])
        try await insert.run(on: db)
    }
}
