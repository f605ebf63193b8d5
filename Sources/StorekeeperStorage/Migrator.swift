import Foundation
import Logging
import SQLKit

/// Applies migrations in order, each in its own transaction, recording them in `storekeeper_migrations`.
///
/// Safe with several processes starting at once: on PostgreSQL the migrations run under an advisory lock, on
/// SQLite under `BEGIN IMMEDIATE`; a process that finds a migration already recorded skips it.
public struct Migrator: Sendable {
    public let migrations: [Migration]
    let logger: Logger

    public init(migrations: [Migration], logger: Logger = Logger(label: "storekeeper.storage.migrations")) {
        self.migrations = migrations
        self.logger = logger
    }

    /// Applies what is missing; returns the names applied now.
    @discardableResult
    public func migrate(_ provider: any DatabaseProvider) async throws -> [String] {
        try await provider.withTransaction { database in
            if provider.kind == .postgres {
                // CREATE TABLE IF NOT EXISTS is not safe against a concurrent twin on PostgreSQL.
                try await database.raw("SELECT pg_advisory_xact_lock(4242424242)").run()
            }
            try await database.create(table: "storekeeper_migrations").ifNotExists()
                .column("name", type: .text, .primaryKey(autoIncrement: false))
                .column("applied_at", type: .bigint, .notNull)
                .run()
        }
        var applied: [String] = []
        for migration in migrations {
            let ran = try await provider.withTransaction { database -> Bool in
                if provider.kind == .postgres {
                    // One migrator at a time across processes; released at commit.
                    try await database.raw("SELECT pg_advisory_xact_lock(4242424242)").run()
                }
                let done = try await database.select().column("name").from("storekeeper_migrations")
                    .where("name", .equal, migration.name).first()
                guard done == nil else { return false }
                do {
                    try await migration.apply(database, provider.kind)
                } catch {
                    throw StorageError.migration(name: migration.name, reason: String(describing: error))
                }
                try await database.insert(into: "storekeeper_migrations").columns("name", "applied_at")
                    .values(SQLBind(migration.name), SQLBind(Int64(Date().timeIntervalSince1970 * 1000))).run()
                return true
            }
            if ran {
                logger.info("migration applied", metadata: ["storekeeper.migration": "\(migration.name)"])
                applied.append(migration.name)
            }
        }
        return applied
    }

    /// The names already applied, in order.
    public func applied(_ provider: any DatabaseProvider) async throws -> [String] {
        try await provider.withSession { database in
            try await database.select().column("name").from("storekeeper_migrations").orderBy("applied_at").all()
                .map { try $0.decode(column: "name", as: String.self) }
        }
    }
}
