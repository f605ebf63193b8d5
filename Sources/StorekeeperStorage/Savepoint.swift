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
        try await db.raw(SQLQueryString("ROLLBACK TO SAVEPOINT \(name)")).run()
        try await db.raw(SQLQueryString("RELEASE SAVEPOINT \(name)")).run()
        throw error
    }
}
