import Logging
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit
import SQLiteNIO
import ServiceLifecycle

/// The embedded default: one SQLite file in WAL mode with durable commits (`synchronous = FULL`).
///
/// SQLite has one writer at a time, so work on the connection is serialized by an async lock: callers wait
/// without blocking threads, and a transaction never interleaves with another caller's statements.
public final class SQLiteDatabaseProvider: DatabaseProvider, Service {
    public enum Location: Sendable, Hashable {
        case memory
        case file(String)
    }

    public let kind = DatabaseKind.sqlite
    private let connection: SQLiteConnection
    private let database: any SQLDatabase
    private let lock = AsyncLock()

    /// Opens (creating if needed) the database and sets WAL, durable commits, foreign keys and a busy timeout.
    public init(location: Location, logger: Logger = Logger(label: "storekeeper.storage.sqlite")) async throws {
        let storage: SQLiteConnection.Storage
        switch location {
        case .memory: storage = .memory
        case .file(let path): storage = .file(path: path)
        }
        connection = try await SQLiteConnection.open(storage: storage, logger: logger)
        database = connection.sql(queryLogLevel: nil)
        if case .file = location {
            try await database.raw("PRAGMA journal_mode = WAL").run()
        }
        // A committed purchase must survive a power cut: fsync at every commit.
        try await database.raw("PRAGMA synchronous = FULL").run()
        try await database.raw("PRAGMA foreign_keys = ON").run()
        try await database.raw("PRAGMA busy_timeout = 5000").run()
    }

    public func withSession<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await lock.withLock { try await body(database) }
    }

    public func withTransaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await lock.withLock {
            try await database.raw("BEGIN IMMEDIATE").run()
            do {
                let result = try await body(database)
                try await database.raw("COMMIT").run()
                return result
            } catch {
                try? await database.raw("ROLLBACK").run()
                throw error
            }
        }
    }

    /// Keeps the connection for the service's lifetime and closes it on shutdown.
    public func run() async throws {
        try? await gracefulShutdown()
        try await close()
    }

    public func close() async throws {
        try await connection.close()
    }
}
