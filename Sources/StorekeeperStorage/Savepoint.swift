import SQLKit

/// Runs `body` inside a savepoint of the caller's transaction: when it throws, only its own writes are rolled
/// back and the transaction goes on (PostgreSQL needs this to continue after a failed statement).
public func withSavepoint<T: Sendable>(
    _ name: String,
    on db: any SQLDatabase,
    _ body: () async throws -> T
) async throws -> T {
    try await db.raw(SQLQueryString("SAVEPOINT \(name)")).run()
    do {
        let value = try await body()
        try await db.raw(SQLQueryString("RELEASE SAVEPOINT \(name)")).run()
        return value
    } catch {
        do {
            try await db.raw(SQLQueryString("ROLLBACK TO SAVEPOINT \(name)")).run()
            try await db.raw(SQLQueryString("RELEASE SAVEPOINT \(name)")).run()
        } catch let lost {
            throw SavepointLost(failure: error, rollback: lost)
        }
        throw error
    }
}

/// A savepoint could not be rolled back: the transaction around it is gone (SQLite rolls a whole transaction back
/// by itself on a full disk, an I/O error or lack of memory), so nothing after it may run as if it were inside one.
public struct SavepointLost: Error, CustomStringConvertible {
    /// What failed inside the savepoint.
    public let failure: any Error
    /// Why rolling back to it failed.
    public let rollback: any Error

    public var description: String { "the transaction was lost (\(rollback)) after: \(failure)" }
}
