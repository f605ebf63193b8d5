import Crypto
import Foundation
import PostgresNIO
import SQLKit
import StorekeeperStorage
import StorekeeperTestSupport
import Testing

/// `db.postgres.tls` against the local PostgreSQL, which CI starts with TLS on and a self-signed certificate for
/// 127.0.0.1 (`POSTGRES_TLS_ROOT_CERTIFICATE` names it). Issue 13, item 20.
@Suite(.enabled(if: PostgresTLSCertificate.path != nil, "needs PostgreSQL with TLS (POSTGRES_TLS_ROOT_CERTIFICATE)"))
struct PostgresTLSTests {
    static var certificate: String? { PostgresTLSCertificate.path }

    static var url: String {
        let environment = ProcessInfo.processInfo.environment
        let user = environment["POSTGRES_USER"] ?? "storekeeper"
        let password = environment["POSTGRES_PASSWORD"].map { ":\($0)" } ?? ""
        return "postgres://\(user)\(password)@127.0.0.1:\(environment["POSTGRES_PORT"] ?? "5432")/\(environment["POSTGRES_DB"] ?? "postgres")"
    }

    struct TimedOut: Error {}

    /// Whether this connection is encrypted, or the error connecting (the pool retries a refused handshake, so a
    /// connection not made within 10 seconds counts as refused).
    static func encrypted(_ tls: PostgresTLS) async -> Result<Bool, any Error> {
        do {
            let provider = PostgresDatabaseProvider(configuration: try PostgresDatabaseProvider.configuration(url: url, tls: tls))
            let task = Task { await provider.run() }
            defer { task.cancel() }
            let ssl = try await withThrowingTaskGroup(of: Bool?.self) { group in
                group.addTask {
                    try await provider.withSession { db in
                        try await db.raw("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").first()?
                            .decode(column: "ssl", as: Bool.self)
                    }
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(10))
                    throw TimedOut()
                }
                defer { group.cancelAll() }
                return try await group.next() ?? nil
            }
            return .success(ssl ?? false)
        } catch {
            return .failure(error)
        }
    }

    /// A self-signed certificate nobody signed the server's with.
    static func strangerCertificate() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("stranger-\(UUID().uuidString).pem").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", "/dev/null", "-out", path,
        ]
        process.standardError = FileHandle.nullDevice
        try ProcessLauncher.run(process)
        process.waitUntilExit()
        return path
    }

    // MARK: Tests

    @Test func requireWithTheServersCertificateConnectsEncrypted() async throws {
        let result = await Self.encrypted(PostgresTLS(mode: .require, caFile: Self.certificate))
        #expect(try result.get() == true)
        let preferred = await Self.encrypted(PostgresTLS(mode: .prefer, caFile: Self.certificate))
        #expect(try preferred.get() == true)
        #expect(try await Self.encrypted(PostgresTLS(mode: .disable)).get() == false, "disable is plain TCP")
    }

    @Test func anUntrustedServerCertificateIsRefused() async throws {
        // The system's roots do not know a self-signed certificate, and neither does another self-signed one.
        if case .success = await Self.encrypted(PostgresTLS(mode: .require)) { Issue.record("connected without trusting the server") }
        let stranger = try Self.strangerCertificate()
        if case .success = await Self.encrypted(PostgresTLS(mode: .require, caFile: stranger)) {
            Issue.record("connected trusting another certificate")
        }
        #expect(throws: StorageError.self) {
            try PostgresDatabaseProvider.configuration(url: Self.url, tls: PostgresTLS(mode: .require, caFile: "/nonexistent.pem"))
        }
    }
}

/// The local PostgreSQL's self-signed certificate, when CI (or a developer) turned TLS on.
enum PostgresTLSCertificate {
    static var path: String? { ProcessInfo.processInfo.environment["POSTGRES_TLS_ROOT_CERTIFICATE"] }
}
