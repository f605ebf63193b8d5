import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import StorekeeperAPI
import StorekeeperCore
import StorekeeperLedger
import StorekeeperServerAPI
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
        _ database: ServerConfiguration.Database,
        tls: PostgresTLS = PostgresTLS(),
        maximumConnections: Int = 20,
        sqliteReaders: Int = SQLiteDatabaseProvider.defaultReaders,
        logger: Logger
    ) async throws -> any DatabaseProvider & Service {
        switch database {
        case .sqlite(let path):
            return try await SQLiteDatabaseProvider(location: .file(path), readers: sqliteReaders, logger: logger)
        case .sqliteInMemory:
            return try await SQLiteDatabaseProvider(location: .memory, logger: logger)
        case .postgres(let url):
            return PostgresDatabaseProvider(
                configuration: try PostgresDatabaseProvider.configuration(url: url, tls: tls, maximumConnections: maximumConnections),
                logger: logger
            )
        }
    }

    /// The application for `configuration`: migrations run and the catalog file is seeded before the server
    /// accepts connections.
    ///
    /// - Parameters:
    ///   - database: an already opened provider to use instead of opening ``ServerConfiguration/database``.
    ///   - onServerRunning: called with the bound port once listening (tests bind port 0).
    public static func buildApplication(
        configuration: ServerConfiguration,
        database: (any DatabaseProvider & Service)? = nil,
        httpClient: HTTPClient = .shared,
        logger: Logger = Logger(label: "storekeeper.server"),
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws -> some ApplicationProtocol {
        let provider: any DatabaseProvider & Service
        if let database {
            provider = database
        } else {
            provider = try await makeDatabase(
                configuration.database,
                tls: configuration.postgresTLS,
                maximumConnections: configuration.postgresMaximumConnections,
                sqliteReaders: configuration.sqliteReaders,
                logger: logger
            )
        }
        let components = try ServerComponents(configuration: configuration, provider: provider, httpClient: httpClient, logger: logger)
        let router = try buildRouter(components)
        let fileCatalog = try configuration.catalogFile.map { try Catalog.load(from: URL(fileURLWithPath: $0)) }
        var app = Application(
            router: router,
            server: .http1(configuration: .init(additionalChannelHandlers: [MalformedRequestHandler()])),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port),
                serverName: "storekeeper"
            ),
            services: [provider] + components.services,
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
            logger: logger
        )
        app.beforeServerStarts {
            let applied = try await Migrator(migrations: StorekeeperSchema.migrations, logger: logger).migrate(provider)
            if !applied.isEmpty { logger.info("migrations applied", metadata: ["count": "\(applied.count)"]) }
            if let fileCatalog {
                let added = try await components.ledger.seedCatalog(fileCatalog)
                if added > 0 { logger.info("catalog seeded from file", metadata: ["entries": "\(added)"]) }
            }
            try await components.catalog.reload()
            components.ready.open()
            logger.info(
                "storekeeper ready",
                metadata: [
                    "apps": "\(configuration.apps.map(\.bundleId))", "database": "\(provider.kind)",
                    "products": "\(components.catalog.catalog.products.count)",
                ]
            )
            for app in configuration.apps {
                for key in app.deprecatedKeys {
                    logger.warning("apps.\(app.name).\(key) is deprecated: move it to apps.\(app.name).appStore.\(key)")
                }
            }
            if configuration.auth.metricsToken == nil {
                logger.notice("/metrics is open to anyone who reaches the port: set auth.metricsToken, or keep the port private")
            }
        }
        return app
    }

    /// Every route, in its group: the middleware every request passes (request log, metrics, errors, body limit),
    /// `/v1` client routes behind client authentication (the purchase routes also deciding their failure outcome),
    /// `/v1/admin` behind admin keys, and Apple's webhooks and the operations endpoints open.
    public static func buildRouter(_ components: ServerComponents) throws -> Router<StorekeeperRequestContext> {
        let router = Router(context: StorekeeperRequestContext.self)
        router.add(middleware: RequestLogMiddleware(level: .info))
        router.add(middleware: MetricsMiddleware(metrics: components.metrics))
        router.add(middleware: ErrorMiddleware(metrics: components.metrics))
        router.add(middleware: BodyLimitMiddleware(maxBodyBytes: components.configuration.maxBodyBytes))
        router.add(middleware: ClientAddressMiddleware(trusted: components.configuration.trustedProxies))
        let v1 = router.group("v1")
        let client = v1.group().add(middleware: ClientAuthMiddleware(auth: components.auth))
        let routes = APIRoutes(
            router: router,
            v1: v1.group().add(middleware: RequestScopeMiddleware()),
            client: client.group().add(middleware: RequestScopeMiddleware()),
            purchases: client.group().add(middleware: PurchaseOutcomeMiddleware()).add(middleware: RequestScopeMiddleware()),
            admin: v1.group("admin").add(middleware: AdminAuthMiddleware(auth: components.auth)).add(middleware: RequestScopeMiddleware())
        )
        OperationsController(
            ledger: components.ledger,
            metrics: components.metrics,
            openAPI: try openAPIDocument(),
            metricsTokenDigest: components.configuration.auth.metricsToken.map { SHA256.hash(data: Data($0.utf8)) }
        )
        .add(to: routes)
        AppleNotificationsController(
            apps: components.apps,
            ledger: components.ledger,
            inbox: components.inbox,
            refusals: components.refusals,
            intake: components.intake,
            metrics: components.metrics
        ).add(to: routes)
        RetentionController(responder: components.retention, recorder: components.retentionRecorder, metrics: components.metrics).add(to: routes)
        if components.playPurchases != nil {
            PlayNotificationsController(apps: components.apps, ledger: components.ledger, intake: components.intake, metrics: components.metrics)
                .add(to: routes)
        }
        var api = APIHandler(
            auth: components.auth,
            ledger: components.ledger,
            guests: components.guests,
            allowLegacyGuestClaims: components.configuration.auth.allowLegacyGuestClaims,
            metrics: components.metrics,
            purchases: components.purchases,
            orders: components.orders,
            accounts: components.accounts,
            subscriptions: components.subscriptions,
            audit: components.audit,
            pendingTransactions: components.pending,
            catalog: components.catalog,
            apps: components.apps,
            inbox: components.inbox,
            refusals: components.refusals,
            consumption: components.consumption,
            jobs: components.jobs,
            orderLifetime: components.configuration.orderLifetime,
            smallBusinessProgram: components.configuration.smallBusinessProgram,
            revenue: components.revenue,
            reconciliations: components.reconciliations,
            webhooks: components.webhooks
        )
        api.webhookEndpoints = components.configuration.webhooks
        api.teamService = components.teams
        api.playPurchases = components.playPurchases
        api.analytics = components.analytics
        let perHour = components.configuration.auth.guestsPerAddressPerHour
        if perHour > 0 { api.guestLimiter = GuestIssueLimiter(perHour: perHour) }
        if let delivery = components.webhookDelivery { api.webhookWake = { delivery.wake() } }
        try api.registerHandlers(on: RouteGroupTransport(routes: routes, signer: components.answerSigner), configuration: APIHandler.coding)
        if !components.configuration.console.operators.isEmpty {
            try ConsoleController.load(
                configuration: components.configuration.console,
                store: components.consoleStore,
                api: api,
                backlog: components.backlog,
                risk: components.risk,
                riskPolicy: components.configuration.risk,
                logger: Logger(label: "storekeeper.console")
            ).add(to: router)
        }
        return router
    }
}

/// The route groups controllers add their routes to.
struct APIRoutes {
    /// Unauthenticated, outside `/v1`: Apple's webhooks and the operations endpoints.
    let router: Router<StorekeeperRequestContext>
    /// `/v1`, unauthenticated: issuing and claiming guest credentials.
    let v1: RouterGroup<StorekeeperRequestContext>
    /// `/v1`, behind client authentication.
    let client: RouterGroup<StorekeeperRequestContext>
    /// `/v1` purchase submissions: client authentication, and every failure says whether to finish the transaction.
    let purchases: RouterGroup<StorekeeperRequestContext>
    /// `/v1/admin`, behind admin keys.
    let admin: RouterGroup<StorekeeperRequestContext>
}
