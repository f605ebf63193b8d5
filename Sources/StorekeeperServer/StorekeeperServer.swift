import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import StorekeeperCore
import StorekeeperStorage

/// Builds the Storekeeper HTTP server: storage, migrations, the catalog, and every route.
public enum StorekeeperServer {
    /// The OpenAPI document describing the HTTP API (kept in the repository, served at `/openapi.yaml`).
    public static func openAPIDocument() throws -> String {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml") else {
            throw ConfigurationError.missing("the bundled openapi.yaml")
        }
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// Opens the configured database (not yet migrated).
    public static func makeDatabase(_ database: ServerConfiguration.Database, logger: Logger) async throws
        -> any DatabaseProvider & Service
    {
        switch database {
        case .sqlite(let path):
            return try await SQLiteDatabaseProvider(location: .file(path), logger: logger)
        case .sqliteInMemory:
            return try await SQLiteDatabaseProvider(location: .memory, logger: logger)
        case .postgres(let url):
            return PostgresDatabaseProvider(configuration: try PostgresDatabaseProvider.configuration(url: url), logger: logger)
        }
    }

    /// The application for `configuration`: migrations run and the catalog file is seeded before the server
    /// accepts connections.
    ///
    /// - Parameters:
    ///   - database: an already opened provider to use instead of opening ``ServerConfiguration/database``.
    ///   - onServerRunning: called with the bound port once listening (tests bind port 0).
    public static func buildApplication(
        configuration: ServerConfiguration, database: (any DatabaseProvider & Service)? = nil,
        httpClient: HTTPClient = .shared, logger: Logger = Logger(label: "storekeeper.server"),
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws -> some ApplicationProtocol {
        let provider: any DatabaseProvider & Service
        if let database {
            provider = database
        } else {
            provider = try await makeDatabase(configuration.database, logger: logger)
        }
        let metrics = ServerMetrics()
        let apps = try AppRegistry(configurations: configuration.apps, httpClient: httpClient, logger: logger)
        let auth = try Authenticator(configuration: configuration.auth)
        let catalogStore = CatalogStore(provider: provider)
        let catalog = CatalogService(store: catalogStore, interval: configuration.catalogRefreshInterval, logger: logger)
        let fileCatalog = try configuration.catalogFile.map { try Catalog.load(from: URL(fileURLWithPath: $0)) }
        let ledger = PurchaseLedger(provider: provider)
        let purchases = PurchaseService(
            apps: apps, catalog: catalog, ledger: ledger, policy: configuration.transferPolicy, metrics: metrics,
            logger: logger)
        let orders = OrderStore(provider: provider)
        let accounts = AccountStore(provider: provider)
        let wallet = WalletStore(provider: provider)

        let router = Router()
        router.add(middleware: ErrorMiddleware(metrics: metrics))
        OperationsController(provider: provider, metrics: metrics, openAPI: try openAPIDocument()).add(to: router)
        ClientController(
            auth: auth, purchases: purchases, orders: orders, accounts: accounts, wallet: wallet,
            users: UserStore(provider: provider), nonces: OfferNonceStore(provider: provider), catalog: catalog, apps: apps,
            maxBodyBytes: configuration.maxBodyBytes, orderLifetime: configuration.orderLifetime
        ).add(to: router)
        AppleNotificationsController(
            apps: apps, inbox: NotificationInbox(provider: provider), auth: auth, metrics: metrics,
            maxBodyBytes: configuration.maxBodyBytes
        ).add(to: router)
        AdminController(
            auth: auth, accounts: accounts, orders: orders, audit: AuditStore(provider: provider), wallet: wallet,
            ledger: ledger, catalog: catalog, maxBodyBytes: configuration.maxBodyBytes
        ).add(to: router)

        var app = Application(
            router: router,
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "storekeeper"),
            services: [provider, catalog],
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
            logger: logger)
        app.beforeServerStarts {
            let applied = try await Migrator(migrations: StorekeeperSchema.migrations, logger: logger).migrate(provider)
            if !applied.isEmpty { logger.info("migrations applied", metadata: ["count": "\(applied.count)"]) }
            if let fileCatalog {
                let added = try await catalogStore.seed(fileCatalog)
                if added > 0 { logger.info("catalog seeded from file", metadata: ["entries": "\(added)"]) }
            }
            try await catalog.reload()
            logger.info(
                "storekeeper ready",
                metadata: [
                    "apps": "\(configuration.apps.map(\.bundleId))", "database": "\(provider.kind)",
                    "products": "\(catalog.catalog.products.count)",
                ])
        }
        return app
    }
}
