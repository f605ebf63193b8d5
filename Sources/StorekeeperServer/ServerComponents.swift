import AppStoreWire
import AsyncHTTPClient
import Foundation
import Logging
import ServiceLifecycle
import StorekeeperAPI
import StorekeeperCore
import StorekeeperLedger
import StorekeeperServerAPI
import StorekeeperStorage

/// Everything a Storekeeper server is made of, assembled once from its configuration: the ledger and the read
/// stores on the database, the services that verify and deliver, the lifecycle jobs, and the long-running services
/// the application runs beside its HTTP server.
public struct ServerComponents: Sendable {
    public let configuration: ServerConfiguration
    public let metrics: ServerMetrics
    let apps: AppRegistry
    let guests: GuestStore
    let auth: Authenticator
    /// Signs answers to apps that ask (`Storekeeper-Nonce`), when a key is configured.
    let answerSigner: AnswerSigner?
    let catalog: CatalogService
    public let ledger: Ledger
    let purchases: PurchaseService
    /// Google Play purchases an Android app submits (nil: no app sells there).
    let playPurchases: PlayPurchaseService?
    let orders: OrderStore
    let accounts: AccountStore
    let revenue: RevenueStore
    let analytics: AnalyticsService
    let reconciliations: ReconciliationStore
    let subscriptions: SubscriptionStore
    let inbox: NotificationInbox
    let refusals: NotificationRefusalStore
    let audit: AuditStore
    let pending: PendingTransactionStore
    let consumption: ConsumptionRequestStore
    let intake: NotificationIntake
    let jobs: LifecycleJobs
    /// Deliveries to the app's backend (`webhooks.*`), and the service sending them when endpoints are configured.
    let webhooks: WebhookQueue
    let webhookDelivery: WebhookDelivery?
    /// Answers Apple's realtime retention requests with the catalog file's `retention` rules.
    let retention: RetentionResponder
    let retentionRecorder: RetentionRecorder
    let ready: ReadinessGate
    /// The console's, the backlog's and the risk review's reads, and the teams of multiseat subscriptions.
    let consoleStore: ConsoleStore
    let backlog: BacklogStore
    let risk: RiskStore
    let teams: TeamService
    /// The services to run (the database provider is the caller's: it may be shared).
    let services: [any Service]

    public init(configuration: ServerConfiguration, provider: any DatabaseProvider, httpClient: HTTPClient, logger: Logger) throws {
        self.configuration = configuration
        let metrics = ServerMetrics()
        self.metrics = metrics
        let apps = try AppRegistry(configurations: configuration.apps, httpClient: httpClient, logger: logger)
        self.apps = apps
        guests = GuestStore(provider: provider)
        auth = try Authenticator(configuration: configuration.auth, guests: guests)
        answerSigner = try configuration.auth.answerSigningKeyPEM.map { try AnswerSigner(privateKeyPEM: $0) }
        let catalog = CatalogService(store: CatalogStore(provider: provider), interval: configuration.catalogRefreshInterval, logger: logger)
        self.catalog = catalog
        let lifecycle = configuration.lifecycle
        let ledger = Ledger(
            provider: provider,
            rules: LedgerRules(
                catalog: { catalog.catalog },
                transferPolicy: configuration.transferPolicy,
                coinClawback: lifecycle.coinClawback
            ),
            onRerun: { cause in metrics.ledgerBatchRerun(cause: cause) },
            logger: logger
        )
        self.ledger = ledger
        consoleStore = ConsoleStore(provider: provider)
        backlog = BacklogStore(provider: provider)
        risk = RiskStore(provider: provider)
        teams = TeamService(apps: apps, ledger: ledger, provider: provider, metrics: metrics, logger: Logger(label: "storekeeper.teams"))
        purchases = PurchaseService(
            apps: apps,
            catalog: catalog,
            ledger: ledger,
            policy: configuration.transferPolicy,
            metrics: metrics,
            logger: logger
        )
        orders = OrderStore(provider: provider)
        accounts = AccountStore(provider: provider)
        let revenue = RevenueStore(provider: provider)
        self.revenue = revenue
        let analyticsStore = AnalyticsStore(provider: provider, lifecycle: StoreMessage.appleLifecycleCounting)
        analytics = AnalyticsService(store: analyticsStore, reportingCurrency: configuration.reportingCurrency)
        let reconciliations = ReconciliationStore(provider: provider)
        self.reconciliations = reconciliations
        let subscriptions = SubscriptionStore(provider: provider)
        self.subscriptions = subscriptions
        inbox = NotificationInbox(provider: provider)
        refusals = NotificationRefusalStore(provider: provider)
        audit = AuditStore(provider: provider)
        pending = PendingTransactionStore(provider: provider)
        let consumption = ConsumptionRequestStore(provider: provider)
        self.consumption = consumption

        let ready = ReadinessGate()
        self.ready = ready
        var jobs = LifecycleJobs()
        jobs.analyticsRollup = AnalyticsRollupJob(store: analyticsStore)
        let purchaseTokens = PurchaseTokens(provider: provider)
        let sellsOnPlay = apps.apps.contains { $0.googlePlay != nil }
        let acknowledger = PlayAcknowledger(apps: apps, tokens: purchaseTokens, ledger: ledger, metrics: metrics, logger: logger)
        if sellsOnPlay {
            jobs.acknowledger = acknowledger
            playPurchases = PlayPurchaseService(
                apps: apps,
                catalog: catalog,
                purchases: purchases,
                tokens: purchaseTokens,
                acknowledger: acknowledger,
                metrics: metrics,
                logger: logger
            )
        } else {
            playPurchases = nil
        }
        if lifecycle.processNotifications {
            jobs.processor = NotificationProcessor(
                ledger: ledger,
                confirmation: V1Confirmation(apps: apps, catalog: catalog, metrics: metrics),
                play: sellsOnPlay ? PlayConfirmation(apps: apps, catalog: catalog, tokens: purchaseTokens, metrics: metrics) : nil,
                configuration: lifecycle,
                metrics: metrics,
                ready: ready,
                logger: logger
            )
        }
        let processor = jobs.processor
        let intake = NotificationIntake(
            ledger: ledger,
            applies: lifecycle.processNotifications,
            metrics: metrics,
            onStored: { processor?.notificationStored() }
        )
        self.intake = intake
        let lease = JobLease(ledger: ledger)
        if sellsOnPlay {
            jobs.playCatchUp = PlayVoidedCatchUp(
                apps: apps,
                ledger: ledger,
                lease: lease,
                metrics: metrics,
                logger: logger,
                onStored: { processor?.notificationStored() }
            )
        }
        if apps.apps.contains(where: { $0.googlePlay?.reports != nil }) {
            jobs.playReconciler = PlayReconciler(
                apps: apps,
                sales: PlaySalesStore(provider: provider),
                ledger: ledger,
                lease: lease,
                metrics: metrics,
                logger: logger
            )
        }
        // Without a Server API key the sweep still asks verifyReceipt about subscriptions proved by a receipt.
        jobs.sweep = RenewalSweep(
            apps: apps,
            ledger: ledger,
            subscriptions: subscriptions,
            lease: lease,
            metrics: metrics,
            logger: logger
        )
        if apps.apps.contains(where: { !$0.serverAPI.isEmpty }) {
            jobs.catchUp = NotificationCatchUp(
                apps: apps,
                intake: intake,
                lease: lease,
                lookback: lifecycle.catchUpLookback,
                metrics: metrics,
                logger: logger
            )
            jobs.responder = ConsumptionResponder(
                apps: apps,
                ledger: ledger,
                requests: consumption,
                catalog: catalog,
                configuration: lifecycle,
                metrics: metrics,
                logger: logger,
                risk: RiskStore(provider: provider),
                riskPolicy: configuration.risk
            )
        }
        let finisher = TransactionFinisher(
            apps: apps,
            store: FinishedTransactions(provider: provider),
            ledger: ledger,
            metrics: metrics,
            logger: logger
        )
        if !finisher.finishing.isEmpty { jobs.finisher = finisher }
        let tokenSetter = AccountTokenSetter(
            apps: apps,
            ledger: ledger,
            store: AccountTokenStore(provider: provider),
            metrics: metrics,
            logger: logger
        )
        if !tokenSetter.setting.isEmpty { jobs.tokenSetter = tokenSetter }
        let installs = AppTransactionLookup(
            apps: apps,
            store: AppTransactionLookups(provider: provider),
            ledger: ledger,
            metrics: metrics,
            logger: logger
        )
        if !installs.looking.isEmpty { jobs.installs = installs }
        let businessMetrics = BusinessMetrics(
            ledger: ledger,
            backlog: BacklogStore(provider: provider),
            risk: RiskStore(provider: provider),
            riskPolicy: configuration.risk,
            metrics: metrics,
            interval: lifecycle.metricsInterval ?? .seconds(15),
            ready: ready,
            logger: logger
        )
        jobs.businessMetrics = businessMetrics
        jobs.dataRetention = DataRetentionJob(
            ledger: ledger,
            configuration: configuration.dataRetention,
            webhooks: configuration.webhooks,
            metrics: metrics,
            logger: logger
        )
        if let lifetime = configuration.auth.idleGuestLifetime {
            jobs.guestExpiry = GuestExpiry(
                ledger: ledger,
                guests: guests,
                lifetime: lifetime,
                metrics: metrics,
                logger: logger
            )
        }
        if let reports = configuration.reports {
            let reportTokens = try AppStoreConnectTokenGenerator(
                privateKeyPEM: reports.privateKeyPEM,
                keyId: reports.keyId,
                issuerId: reports.issuerId
            )
            jobs.reconciler = Reconciler(
                client: AppStoreConnectReportsClient(httpClient: httpClient, tokens: reportTokens, baseURL: reports.url),
                analytics: reports.analyticsReports
                    ? AnalyticsReportsClient(httpClient: httpClient, tokens: reportTokens, baseURL: reports.url) : nil,
                configuration: reports,
                apps: apps,
                catalog: catalog,
                revenue: revenue,
                store: reconciliations,
                ledger: ledger,
                lease: lease,
                smallBusiness: configuration.smallBusinessProgram,
                metrics: metrics,
                logger: logger
            )
        }
        self.jobs = jobs
        let webhooks = WebhookQueue(provider: provider)
        self.webhooks = webhooks
        if configuration.webhooks.isEmpty {
            webhookDelivery = nil
        } else {
            let delivery = WebhookDelivery(
                endpoints: configuration.webhooks,
                provider: provider,
                ledger: ledger,
                metrics: metrics,
                ready: ready,
                logger: logger
            )
            ledger.onCommit { delivery.wake() }
            webhookDelivery = delivery
        }
        let rules = try configuration.catalogFile.map { try Catalog.load(from: URL(fileURLWithPath: $0)).retention } ?? []
        retention = RetentionResponder(
            apps: apps,
            rules: rules,
            catalog: { catalog.catalog },
            store: RetentionStore(provider: provider),
            claim: { requestId, signedAt in
                try await ledger.claimRetentionRequest(
                    requestId,
                    signedAt: signedAt,
                    forgetBefore: Date().addingTimeInterval(-2 * RetentionResponder.freshness)
                )
            }
        )
        let retentionRecorder = RetentionRecorder(ledger: ledger, logger: logger)
        self.retentionRecorder = retentionRecorder
        // The ledger first: services shut down in reverse order, so it drains after everything that writes through it.
        var services: [any Service] = [ledger, catalog, retentionRecorder]
        if let webhookDelivery { services.append(webhookDelivery) }
        if lifecycle.metricsInterval != nil { services.append(businessMetrics) }
        if let processor { services.append(processor) }
        // Each periodic job on its schedule; one without an interval runs only when an operator asks.
        let intervals: [String: Duration?] = [
            "reconciliation": configuration.reports?.reconcileInterval,
            "catch_up": lifecycle.catchUpInterval,
            "renewal_sweep": lifecycle.sweepInterval,
            "consumption_responder": lifecycle.consumptionInterval,
            "finish_transactions": .seconds(5),
            "set_account_tokens": lifecycle.accountTokenInterval,
            "app_transactions": lifecycle.appTransactionInterval,
            "expire_guests": .seconds(6 * 3_600),
            "prune": configuration.dataRetention.interval,
            "acknowledge_purchases": lifecycle.acknowledgeInterval,
            "play_catch_up": lifecycle.playCatchUpInterval,
            "play_reconciliation": lifecycle.playReconcileInterval,
            "analytics_rollup": lifecycle.analyticsInterval,
        ]
        for (name, job) in jobs.periodic.sorted(by: { $0.key < $1.key }) {
            guard let interval = intervals[name] ?? nil else { continue }
            services.append(ScheduledJob(name: name, job: job, interval: interval, ready: ready, runLog: metrics.runLog, logger: logger))
        }
        self.services = services
    }
}
