import Foundation
import Logging
import PostgresNIO
import SQLKit
import StorekeeperStorage

/// Fresh PostgreSQL databases on the server CI starts (`POSTGRES_*`), dropped after use.
enum TestPostgres {
    static func withFreshDatabase(_ body: (String) async throws -> Void) async throws {
        let environment = ProcessInfo.processInfo.environment
        let host = environment["POSTGRES_HOST"] ?? "127.0.0.1"
        let port = Int(environment["POSTGRES_PORT"] ?? "") ?? 5432
        let user = environment["POSTGRES_USER"] ?? "storekeeper"
        let password = environment["POSTGRES_PASSWORD"] ?? ""
        let name = "sk_server_\(UUID().uuidString.prefix(8).lowercased())"
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
        let outcome: Result<Void, any Error>
        do {
            try await body("postgres://\(user):\(password)@\(host):\(port)/\(name)")
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        try await admin.withSession { try await $0.raw("DROP DATABASE IF EXISTS \(unsafeRaw: name) WITH (FORCE)").run() }
        try outcome.get()
    }
}
