import Foundation
import Logging
import PostgresNIO
import SQLKit
import StorekeeperStorage

/// The databases every storage and ledger test runs on: in-memory SQLite, an SQLite file, and PostgreSQL when
/// `POSTGRES_HOST` / `POSTGRES_PORT` are set (CI starts Debian's postgresql on 127.0.0.1), each fresh.
public enum StorageHarness {
    public static var postgresConfigured: Bool { ProcessInfo.processInfo.environment["POSTGRES_PORT"] != nil }

    public static func withEachProvider(_ body: (any DatabaseProvider) async throws -> Void) async throws {
        let memory = try await SQLiteDatabaseProvider(location: .memory)
        try await closing(memory) { try await body(memory) }

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("storekeeper-\(UUID().uuidString).sqlite").path
        let file = try await SQLiteDatabaseProvider(location: .file(path))
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        try await closing(file) { try await body(file) }

        if postgresConfigured { try await withFreshPostgres(body) }
    }

    /// Runs `body`, then closes `provider` whether `body` threw or not.
    public static func closing(_ provider: SQLiteDatabaseProvider, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            try? await provider.close()
            throw error
        }
        try await provider.close()
    }

    /// A database of its own on the configured server, dropped afterwards.
    public static func withFreshPostgres(_ body: (any DatabaseProvider) async throws -> Void) async throws {
        let environment = ProcessInfo.processInfo.environment
        let host = environment["POSTGRES_HOST"] ?? "127.0.0.1"
        let port = Int(environment["POSTGRES_PORT"] ?? "") ?? 5432
        let user = environment["POSTGRES_USER"] ?? "storekeeper"
        let password = environment["POSTGRES_PASSWORD"]
        let name = "storekeeper_test_\(UUID().uuidString.prefix(8).lowercased())"
        let admin = PostgresDatabaseProvider(
            configuration: .init(
                host: host,
                port: port,
                username: user,
                password: password,
                database: environment["POSTGRES_DB"] ?? "postgres",
                tls: .disable
            )
        )
        let adminTask = Task { await admin.run() }
        defer { adminTask.cancel() }
        try await admin.withSession { try await $0.raw("CREATE DATABASE \(unsafeRaw: name)").run() }
        let provider = PostgresDatabaseProvider(
            configuration: .init(host: host, port: port, username: user, password: password, database: name, tls: .disable)
        )
        let task = Task { await provider.run() }
        let outcome: Result<Void, any Error>
        do {
            try await body(provider)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        task.cancel()
        _ = await task.result
        // Dropped whether the body passed or not, so failed runs leave nothing behind.
        try await admin.withSession { try await $0.raw("DROP DATABASE IF EXISTS \(unsafeRaw: name) WITH (FORCE)").run() }
        try outcome.get()
    }
}
