import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import StorekeeperCore
import StorekeeperLedger
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
    public static func makeDatabase(
        _ database: ServerConfiguration.Database, tls: PostgresTLS = PostgresTLS(), maximumConnections: Int = 20, logger: Logger
    ) async throws -> any DatabaseProvider & Service {
        switch database {
        case .sqlite(let path):
            return try await SQLiteDatabaseProvider(location: .file(path), logger: logger)
        case .sqliteInMemory:
            return try await SQLiteDatabaseProvider(location: .memory, logger: logger)
        case .postgres(let url):
            return PostgresDatabaseProvider(
                configuration: try PostgresDatabaseProvider.configuration(url: url, tls: tls, maximumConnections: maximumConnections),
                logger: logger)
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
            provider = try await makeDatabase(
                configuration.database, tls: configuration.postgresTLS, maximumConnections: configuration.postgresMaximumConnections,
                logger: logger)
        }
        let metrics = ServerMetrics()
        let apps = try AppRegistry(configurations: configuration.apps, httpClient: httpClient, logger: logger)
        let guests = GuestStore(provider: provider)
        let auth = try Authenticator(configuration: configuration.auth, guests: guests)
        let catalog = CatalogService(store: CatalogStore(provider: provider), interval: configuration.catalogRefreshInterval, logger: logger)
        let fileCatalog = try configuration.catalogFile.map { try Catalog.load(from: URL(fileURLWithPath: $0)) }
        let lifecycle = configuration.lifecycle
        let ledger = Ledger(
            provider: provider,
            rules: LedgerRules(
                catalog: { catalog.catalog }, transferPolicy: configuration.transferPolicy, coinClawback: lifecycle.coinClawback),
            logger: logger)
        let purchases = PurchaseService(
            apps: apps, catalog: catalog, ledger: ledger, policy: configuration.transferPolicy, metrics: metrics, logger: logger)
        let orders = OrderStore(provider: provider)
        let accounts = AccountStore(provider: provider)
        let subscriptions = SubscriptionStore(provider: provider)
        let inbox = NotificationInbox(provider: provider)

        let router = Router(context: StorekeeperRequestContext.self)
        router.add(middleware: ErrorMiddleware(metrics: metrics))
        OperationsController(ledger: ledger, metrics: metrics, openAPI: try openAPIDocument()).add(to: router)
        ClientController(
            auth: auth, ledger: ledger, guests: guests, allowLegacyGuestClaims: configuration.auth.allowLegacyGuestClaims,
            metrics: metrics, purchases: purchases, orders: orders, accounts: accounts, subscriptions: subscriptions, catalog: catalog,
            apps: apps, maxBodyBytes: configuration.maxBodyBytes, orderLifetime: configuration.orderLifetime
        ).add(to: router)
        let ready = ReadinessGate()
        var jobs = LifecycleJobs()
        if lifecycle.processNotifications {
            jobs.processor = NotificationProcessor(
                ledger: ledger, confirmation: V1Confirmation(apps: apps, catalog: catalog, metrics: metrics), configuration: lifecycle,
                metrics: metrics, ready: ready, logger: logger)
        }
        let processor = jobs.processor
        let intake = NotificationIntake(
            ledger: ledger, applies: lifecycle.processNotifications, onStored: { processor?.notificationStored() })
        let lease = JobLease(ledger: ledger)
        let hasServerAPI = apps.apps.contains { !$0.serverAPI.isEmpty }
        // Without a Server API key the sweep still asks verifyReceipt about subscriptions proved by a receipt.
        jobs.sweep = RenewalSweep(
            apps: apps, ledger: ledger, subscriptions: subscriptions, lease: lease,
            interval: lifecycle.sweepInterval ?? .seconds(900), metrics: metrics, ready: ready, logger: logger)
        if hasServerAPI {
            jobs.catchUp = NotificationCatchUp(
                apps: apps, intake: intake, lease: lease, interval: lifecycle.catchUpInterval ?? .seconds(3_600),
                lookback: lifecycle.catchUpLookback, metrics: metrics, ready: ready, logger: logger)
            jobs.responder = ConsumptionResponder(
                apps: apps, ledger: ledger, requests: ConsumptionRequestStore(provider: provider), catalog: catalog, configuration: lifecycle,
                interval: lifecycle.consumptionInterval ?? .seconds(30), metrics: metrics, ready: ready, logger: logger)
        }
        var services: [any Service] = [provider, catalog]
        if let processor { services.append(processor) }
        if let catchUp = jobs.catchUp, lifecycle.catchUpInterval != nil { services.append(catchUp) }
        if let sweep = jobs.sweep, lifecycle.sweepInterval != nil { services.append(sweep) }
        if let responder = jobs.responder, lifecycle.consumptionInterval != nil { services.append(responder) }

        AppleNotificationsController(
            apps: apps, ledger: ledger, inbox: inbox, refusals: NotificationRefusalStore(provider: provider), intake: intake, auth: auth,
            metrics: metrics, maxBodyBytes: configuration.maxBodyBytes
        ).add(to: router)
        AdminController(
            auth: auth, purchases: purchases, metrics: metrics, accounts: accounts, subscriptions: subscriptions, orders: orders,
            audit: AuditStore(provider: provider), ledger: ledger, pendingTransactions: PendingTransactionStore(provider: provider),
            catalog: catalog, maxBodyBytes: configuration.maxBodyBytes
        ).add(to: router)
        LifecycleController(
            auth: auth, ledger: ledger, inbox: inbox, subscriptions: subscriptions, consumption: ConsumptionRequestStore(provider: provider),
            jobs: jobs
        ).add(to: router)

        var app = Application(
            router: router,
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "storekeeper"),
            services: services,
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
            logger: logger)
        app.beforeServerStarts {
            let applied = try await Migrator(migrations: StorekeeperSchema.migrations, logger: logger).migrate(provider)
            if !applied.isEmpty { logger.info("migrations applied", metadata: ["count": "\(applied.count)"]) }
            if let fileCatalog {
                let added = try await ledger.seedCatalog(fileCatalog)
                if added > 0 { logger.info("catalog seeded from file", metadata: ["entries": "\(added)"]) }
            }
            try await catalog.reload()
            ready.open()
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
