import Foundation
import SQLKit
import StorekeeperCore

/// `job_state`: a named lease per periodic job, so it runs in one process at a time, and the cursor it resumes from.
public enum JobStateTable {
    /// Takes the lease `name` until `until` if it is free or already `owner`'s; the job's cursor, or nil when another
    /// process holds it (`acquired` false).
    public static func acquire(
        _ name: String,
        owner: String,
        until: Date,
        now: Date,
        on db: any SQLDatabase
    ) async throws -> (acquired: Bool, cursor: String?) {
        var insert = BulkInsert(
            into: "job_state",
            columns: ["name", "lease_owner", "lease_until", "updated_at"],
            suffix: "ON CONFLICT (name) DO NOTHING"
        )
        insert.values([name, String?.none, 0, now.millis])
        try await insert.run(on: db)
        guard
            let row = try await db.raw(
                """
                UPDATE job_state SET lease_owner = \(bind: owner), lease_until = \(bind: until.millis), updated_at = \(bind: now.millis)
                WHERE name = \(bind: name) AND (lease_until < \(bind: now.millis) OR lease_owner = \(bind: owner))
                RETURNING cursor
                """
            ).first()
        else { return (false, nil) }
        return (true, try row.decode(column: "cursor", as: String?.self))
    }

    /// Saves the cursor (when given) and gives the lease up.
    public static func release(_ name: String, owner: String, cursor: String?, now: Date, on db: any SQLDatabase) async throws {
        try await db.raw(
            """
            UPDATE job_state SET lease_owner = NULL, lease_until = 0, updated_at = \(bind: now.millis),
                cursor = COALESCE(\(bind: cursor), cursor)
            WHERE name = \(bind: name) AND lease_owner = \(bind: owner)
            """
        ).run()
    }
}
