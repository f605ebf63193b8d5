import Foundation
import Logging
import PostgresKit
import PostgresNIO
import SQLKit
import ServiceLifecycle

/// PostgreSQL through a pooled `PostgresClient`: several Storekeeper processes may share one database.
/// The client must be running (this provider is a `Service`: add it to the service group).
public final class PostgresDatabaseProvider: DatabaseProvider, Service {
    public let kind = DatabaseKind.postgres
    public let client: PostgresClient
    private let logger: Logger

    public init(configuration: PostgresClient.Configuration, logger: Logger = Logger(label: "storekeeper.storage.postgres")) {
        self.client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.logger = logger
    }

    /// Connection settings from a URL such as `postgres://user:password@127.0.0.1:5432/storekeeper`, TLS, and how
    /// many connections this process may hold (PostgreSQL refuses clients past its own `max_connections`, shared by
    /// every process on the server).
    public static func configuration(
        url: String,
        tls: PostgresTLS = PostgresTLS(),
        maximumConnections: Int = 20
    ) throws -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? ""),
            let host = components.host, let user = components.user
        else { throw StorageError.configuration("not a postgres:// URL") }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : nil
        var configuration = PostgresClient.Configuration(
            host: host,
            port: components.port ?? 5432,
            username: user,
            password: components.password,
            database: database?.isEmpty == false ? database : nil,
            tls: try tls.clientTLS()
        )
        configuration.options.maximumConnections = max(1, maximumConnections)
        return configuration
    }

    public func run() async {
        await client.run()
    }

    public func withSession<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await client.withConnection { connection in
            try await body(connection.sql(queryLogLevel: nil, logger: logger))
        }
    }

    public func withTransaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        do {
            return try await client.withTransaction(logger: logger) { connection in
                try await body(connection.sql(queryLogLevel: nil, logger: logger))
            }
        } catch let error as PostgresTransactionError {
            // Callers act on their own error (a duplicate, an abort), as with SQLite; the driver's wrapper is only
            // kept when the transaction machinery itself failed.
            if let closureError = error.closureError, error.rollbackError == nil { throw closureError }
            throw error
        }
    }
}
