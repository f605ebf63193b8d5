import ArgumentParser
import Configuration
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import StorekeeperServer
import StorekeeperStorage
import SystemPackage
import UnixSignals

/// Builds the configuration reader (environment variables, then the JSON file) and the loggers.
enum ConfigurationLoader {
    static func reader(file: String?) async throws -> ConfigReader {
        try await ServerConfiguration.reader(file: file)
    }

    /// A logger at `log.level` (`LOG_LEVEL`). An unusable level is left at info here; reading the whole
    /// configuration then refuses the start, naming the key.
    static func logger(_ label: String, reader: ConfigReader?) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = reader.flatMap { try? ServerConfiguration.logLevel(reader: $0) } ?? .info
        return logger
    }
}

/// `storekeeper serve`: the Storekeeper server.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Storekeeper server (migrations are applied at start).",
        discussion: """
            Configuration comes from environment variables, then from --config (JSON with the same dotted keys as \
            nested objects): http.port (HTTP_PORT), db.kind (DB_KIND: sqlite | postgres), db.sqlite.path, \
            db.postgres.url (DB_POSTGRES_URL), catalog.file, apps (APPS: names), apps.<name>.appStore.bundleId, \
            apps.<name>.appStore.{appAppleId,sharedSecret,apiKey.{id,issuer,path}}, \
            apps.<name>.googlePlay.{packageName,serviceAccount.path,push.audience,push.serviceAccount}, \
            auth.jwt.hs256Secret, auth.jwt.es256PublicKey, auth.jwt.issuer, auth.jwt.audience, auth.apiKeys, \
            auth.adminKeys (name:key,...), auth.adminKeyScopes (name:scope+scope,...; unnamed keys hold admin), \
            auth.guests, policy.transfer (refuse | transfer). See README.md.
            """
    )

    @Option(name: .customLong("config"), help: "JSON configuration file.")
    var configFile: String?

    func run() async throws {
        let reader: Result<ConfigReader, any Error>
        do { reader = .success(try await ConfigurationLoader.reader(file: configFile)) } catch { reader = .failure(error) }
        let logger = ConfigurationLoader.logger("storekeeper.server", reader: try? reader.get())
        do {
            let configuration = try ServerConfiguration(reader: try reader.get())
            let app = try await StorekeeperServer.buildApplication(configuration: configuration, logger: logger)
            try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
        } catch {
            // One line with the cause; a non-zero exit.
            logger.critical("storekeeper failed: \(StartFailure.describe(error))")
            throw ExitCode.failure
        }
    }
}

/// `storekeeper migrate`: applies the database migrations and exits.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply database migrations (the same configuration as serve) and exit."
    )

    @Option(name: .customLong("config"), help: "JSON configuration file.")
    var configFile: String?

    func run() async throws {
        let reader = try await ConfigurationLoader.reader(file: configFile)
        let logger = ConfigurationLoader.logger("storekeeper.migrate", reader: reader)
        let configuration = try ServerConfiguration(reader: reader)
        let provider = try await StorekeeperServer.makeDatabase(
            configuration.database,
            tls: configuration.postgresTLS,
            maximumConnections: 2,
            logger: logger
        )
        // PostgresClient needs its run loop; the SQLite connection works without one.
        let runner = Task { if provider.kind == .postgres { try? await provider.run() } }
        defer { runner.cancel() }
        let applied = try await Migrator(migrations: StorekeeperSchema.migrations, logger: logger).migrate(provider)
        if let sqlite = provider as? SQLiteDatabaseProvider { try await sqlite.close() }
        print(applied.isEmpty ? "database is up to date" : "applied: " + applied.joined(separator: ", "))
    }
}

/// A failure to start (or a crash of a service) as one readable line.
enum StartFailure {
    static func describe(_ error: any Error) -> String {
        let text = String(describing: error)
        return text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
