import Foundation

/// A named lease in the database, so a periodic job runs in one process at a time however many share the
/// database, and a cursor the job resumes from.
public struct JobLease: Sendable {
    let ledger: Ledger
    /// This process's name in the lease.
    public let owner: String

    public init(ledger: Ledger, owner: String = UUID().uuidString) {
        self.ledger = ledger
        self.owner = owner
    }

    /// Takes the lease `name` for `duration` if nobody else holds it; returns the job's cursor (nil the first
    /// time), or `acquired` false when another process holds the lease.
    public func acquire(_ name: String, for duration: Duration, now: Date = Date()) async throws -> (acquired: Bool, cursor: String?) {
        try await ledger.acquireLease(name, owner: owner, for: duration, now: now)
    }

    /// Saves the cursor (when given) and gives the lease up; written even from a cancelled task (shutdown).
    public func release(_ name: String, cursor: String?) async throws {
        try await ledger.releaseLease(name, owner: owner, cursor: cursor)
    }
}
