import Foundation
import SQLKit

/// A named lease in the database, so a periodic job runs in one process at a time however many share the
/// database, and a cursor the job resumes from.
public struct JobLease: Sendable {
    let provider: any DatabaseProvider
    /// This process's name in the lease.
    public let owner: String

    public init(provider: any DatabaseProvider, owner: String = UUID().uuidString) {
        self.provider = provider
        self.owner = owner
    }

    /// Takes the lease `name` for `duration` if nobody else holds it; returns the job's cursor (nil the first
    /// time), or nil `acquired` when another process holds the lease.
    public func acquire(_ name: String, for duration: Duration, now: Date = Date()) async throws -> (acquired: Bool, cursor: String?) {
        let until = now.addingTimeInterval(Double(duration.components.seconds)).millis
        return try await provider.withTransaction { db in
            try await db.raw(
                """
                INSERT INTO job_state (name, lease_owner, lease_until, updated_at)
                VALUES (\(bind: name), NULL, 0, \(bind: now.millis))
                ON CONFLICT (name) DO NOTHING
                """
            ).run()
            guard
                let row = try await db.raw(
                    """
                    UPDATE job_state SET lease_owner = \(bind: owner), lease_until = \(bind: until), updated_at = \(bind: now.millis)
                    WHERE name = \(bind: name) AND (lease_until < \(bind: now.millis) OR lease_owner = \(bind: owner))
                    RETURNING cursor
                    """
                ).first()
            else { return (false, nil) }
            return (true, try row.decode(column: "cursor", as: String?.self))
        }
    }

    /// Saves the cursor and gives the lease up.
    public func release(_ name: String, cursor: String?, now: Date = Date()) async throws {
        try await provider.withSession { db in
            try await db.raw(
                """
                UPDATE job_state SET lease_owner = NULL, lease_until = 0, updated_at = \(bind: now.millis),
                    cursor = COALESCE(\(bind: cursor), cursor)
                WHERE name = \(bind: name) AND lease_owner = \(bind: owner)
                """
            ).run()
        }
    }

    /// Releases `name` (saving `cursor`) and returns once it is written, even from a cancelled task: during
    /// shutdown the job's own task is cancelled, and the release must still happen before the process exits.
    public static func releaseUncancelled(_ lease: JobLease, _ name: String, cursor: String?) async throws {
        try await Task { try await lease.release(name, cursor: cursor) }.value
    }
}
