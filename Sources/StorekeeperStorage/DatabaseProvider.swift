import Foundation
import SQLKit

/// The database engine behind a provider; dialect differences are decided on this, in one visible place each.
public enum DatabaseKind: String, Sendable, Hashable {
    case sqlite
    case postgres
}

/// Hands out database access: a session for reads and single statements, a transaction for anything that must
/// commit or roll back as one. Store code sees only `any SQLDatabase`.
public protocol DatabaseProvider: Sendable {
    var kind: DatabaseKind { get }

    /// Runs `body` with a connection.
    func withSession<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws. SQLite takes the write
    /// lock up front (`BEGIN IMMEDIATE`), so two writers never deadlock upgrading read locks.
    func withTransaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T

    /// Runs `body`, which only reads, on a connection that does not hold up the writer: a long report must not
    /// stall purchases. SQLite gives it a read-only connection of its own (WAL readers run beside the writer).
    func withReader<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T
}

extension DatabaseProvider {
    /// Where every session is pooled (PostgreSQL), a reader is any session.
    public func withReader<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await withSession(body)
    }

    /// Asks the database a trivial question (liveness of the connection).
    public func ping() async throws {
        try await withSession { try await $0.raw("SELECT 1 AS ok").run() }
    }
}
