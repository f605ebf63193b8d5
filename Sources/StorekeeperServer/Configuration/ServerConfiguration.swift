import Configuration
import Foundation
import Logging
import StorekeeperCore
import StorekeeperStorage

/// Everything `storekeeper serve` reads at start.
public struct ServerConfiguration: Sendable {
    /// Where the data lives.
    public enum Database: Sendable, Hashable {
        case sqlite(path: String)
        case sqliteInMemory
        case postgres(url: String)
    }

    public var host: String
    public var port: Int
    public var database: Database
    /// A catalog file seeding the database's catalog (the database wins for products it already has).
    public var catalogFile: String?
    public var apps: [AppConfiguration]
    public var auth: AuthConfiguration
    public var transferPolicy: TransferPolicy
    /// How long a created order waits for its purchase before it reads as expired.
    public var orderLifetime: Duration
    /// When the developer account was in the App Store Small Business Program (15 % commission), for estimates.
    public var smallBusinessProgram: SmallBusinessProgram
    /// The currency the subscription analytics report money in (`revenue.reportingCurrency`, ISO 4217; `USD`).
    public var reportingCurrency = "USD"
    /// Larger request bodies are refused with 413.
    public var maxBodyBytes: Int
    /// The addresses of the reverse proxies in front of the server whose `X-Forwarded-For` names the client
    /// (`http.trustedProxies`); from anyone else the header is ignored.
    public var trustedProxies: Set<String> = []
    /// How often each process reloads the catalog others may have changed.
    public var catalogRefreshInterval: Duration
    /// Notifications, refunds, the renewal sweep, catch-up and consumption answers.
    public var lifecycle: LifecycleConfiguration
    /// TLS to PostgreSQL (`db.postgres.tls`, `db.postgres.tlsRootCertificate`).
    public var postgresTLS: PostgresTLS = PostgresTLS()
    /// The most connections this process holds to PostgreSQL (`db.postgres.maxConnections`).
    public var postgresMaximumConnections: Int = 20
    /// Read-only SQLite connections for reports and the console beside the writer's (0: every read on the writer's
    /// connection, as before they existed; `bench-purchases --sqlite-readers` compares the two).
    public var sqliteReaders: Int = SQLiteDatabaseProvider.defaultReaders
    /// The level of the server's logs.
    public var logLevel: Logger.Level = .info
    /// App Store Connect's reports for reconciliation (`reports.*`); nil: no reconciliation.
    public var reports: ReportsConfiguration?
    /// The operator console at `/admin` (`console.*`); served only when operators are configured.
    public var console = ConsoleConfiguration()
    /// When a customer is up for review, and when refund questions about them are answered `DECLINE` (`risk.*`).
    public var risk = RiskPolicy()
    /// Where the app's backend is sent events and Apple's notifications (`webhooks.<name>.*`).
    public var webhooks: [WebhookConfiguration] = []
    /// How long events, notifications and audit entries are kept (`dataRetention.*`).
    public var dataRetention = DataRetentionConfiguration()

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        database: Database = .sqlite(path: "storekeeper.sqlite"),
        catalogFile: String? = nil,
        apps: [AppConfiguration],
        auth: AuthConfiguration,
        transferPolicy: TransferPolicy = .refuse,
        orderLifetime: Duration = .seconds(86_400),
        smallBusinessProgram: SmallBusinessProgram = SmallBusinessProgram(),
        maxBodyBytes: Int = 1 << 20,
        catalogRefreshInterval: Duration = .seconds(5),
        postgresTLS: PostgresTLS = PostgresTLS(),
        postgresMaximumConnections: Int = 20,
        lifecycle: LifecycleConfiguration = LifecycleConfiguration()
    ) {
        self.postgresTLS = postgresTLS
        self.postgresMaximumConnections = postgresMaximumConnections
        self.lifecycle = lifecycle
        self.host = host
        self.port = port
        self.database = database
        self.catalogFile = catalogFile
        self.apps = apps
        self.auth = auth
        self.transferPolicy = transferPolicy
        self.orderLifetime = orderLifetime
        self.smallBusinessProgram = smallBusinessProgram
        self.maxBodyBytes = maxBodyBytes
        self.catalogRefreshInterval = catalogRefreshInterval
    }

    /// Reads the configuration. Keys (environment form in parentheses):
    /// - `http.host` (`HTTP_HOST`, default 127.0.0.1), `http.port` (`HTTP_PORT`, 8080),
    ///   `http.maxBodyBytes` (`HTTP_MAX_BODY_BYTES`, 1048576), `http.trustedProxies` (`HTTP_TRUSTED_PROXIES`: the IP
    ///   addresses of the reverse proxies whose `X-Forwarded-For` names the client; none by default)
    /// - `db.kind` (`DB_KIND`: `sqlite` or `postgres`), `db.sqlite.path` (`DB_SQLITE_PATH`, storekeeper.sqlite;
    ///   `:memory:` for a throwaway database), `db.postgres.url` (`DB_POSTGRES_URL`, secret), `db.postgres.tls`
    ///   (`DB_POSTGRES_TLS`: `disable`, `prefer`, `require`), `db.postgres.tlsRootCertificate` (`DB_POSTGRES_TLS_ROOT_CERTIFICATE`),
    ///   `db.postgres.maxConnections` (`DB_POSTGRES_MAX_CONNECTIONS`, 20; 1-1000)
    /// - `catalog.file` (`CATALOG_FILE`), `catalog.refreshSeconds` (`CATALOG_REFRESH_SECONDS`, 5; 1-86400)
    /// - `apps` (`APPS`, comma-separated names, default `main`), then each app under `apps.<name>.*`
    ///   (see ``AppConfiguration/init(name:reader:)``)
    /// - `auth.*` (see ``AuthConfiguration/init(reader:)``)
    /// - `policy.transfer` (`POLICY_TRANSFER`: `refuse` or `transfer`), `orders.lifetimeSeconds`
    ///   (`ORDERS_LIFETIME_SECONDS`, 86400)
    /// - `lifecycle.*` (see ``LifecycleConfiguration/init(reader:)``)
    /// - `reports.*` (see ``ReportsConfiguration/read(reader:)``)
    /// - `console.*` (see ``ConsoleConfiguration/init(reader:)``)
    /// - `risk.refundsToReview` (3), `risk.refundRatePermille` (300), `risk.mergedGuestsToReview` (3),
    ///   `risk.declineRefundsFrom` (0: never; from this many refunds Apple's refund questions are answered `DECLINE`)
    /// - `webhooks` (`WEBHOOKS`, comma-separated names), then each under `webhooks.<name>.*` (see
    ///   ``WebhookConfiguration/init(name:reader:apps:)``)
    /// - `log.level` (`LOG_LEVEL`, info)
    ///
    /// A value of the wrong type or out of range stops the start with a message naming its key.
    public init(reader configReader: ConfigReader) throws {
        let reader = StrictConfigReader(configReader)
        host = try reader.string("http.host", default: "127.0.0.1")
        port = try reader.int("http.port", in: 0...65535, default: 8080)
        maxBodyBytes = try reader.int("http.maxBodyBytes", in: 1024...(64 << 20), default: 1 << 20)
        trustedProxies = []
        for proxy in try reader.list("http.trustedProxies") ?? [] {
            let address = proxy.trimmingCharacters(in: .whitespaces)
            guard ClientAddressMiddleware.isIPAddress(address) else {
                throw ConfigurationError.invalid("http.trustedProxies entries must be IP addresses; \(address) is not")
            }
            trustedProxies.insert(address)
        }
        switch try reader.choice("db.kind", ["sqlite", "postgres"], default: "sqlite") {
        case "postgres":
            guard let url = try reader.string("db.postgres.url", isSecret: true) else {
                throw ConfigurationError.missing("db.postgres.url (DB_POSTGRES_URL)")
            }
            database = .postgres(url: url)
        default:
            let path = try reader.string("db.sqlite.path", default: "storekeeper.sqlite")
            database = path == ":memory:" ? .sqliteInMemory : .sqlite(path: path)
        }
        let tlsMode = try reader.choice("db.postgres.tls", PostgresTLS.Mode.allCases.map(\.rawValue), default: "disable")
        postgresTLS = PostgresTLS(mode: PostgresTLS.Mode(rawValue: tlsMode) ?? .disable, caFile: try reader.string("db.postgres.tlsRootCertificate"))
        postgresMaximumConnections = try reader.int("db.postgres.maxConnections", in: 1...1_000, default: 20)
        catalogFile = try reader.string("catalog.file")
        // At least a second: zero would reload the catalog in a tight loop.
        catalogRefreshInterval = .seconds(try reader.int("catalog.refreshSeconds", in: 1...86_400, default: 5))
        let names = try reader.list("apps") ?? ["main"]
        for name in names where name.isEmpty || name.utf8.count > 64 || name.contains(".") {
            throw ConfigurationError.invalid("apps: \(name) is not a usable app name")
        }
        apps = try names.map { try AppConfiguration(name: $0, reader: reader.scoped(to: "apps").scoped(to: $0)) }
        auth = try AuthConfiguration(reader: reader.scoped(to: "auth"))
        transferPolicy = TransferPolicy(rawValue: try reader.choice("policy.transfer", ["refuse", "transfer"], default: "refuse")) ?? .refuse
        orderLifetime = .seconds(try reader.int("orders.lifetimeSeconds", in: 60...(366 * 86_400), default: 86_400))
        smallBusinessProgram = try SmallBusinessProgram(periods: (reader.list("revenue.smallBusinessProgram") ?? []).map(Self.programPeriod))
        reportingCurrency = try reader.string("revenue.reportingCurrency", default: "USD")
        guard reportingCurrency.utf8.count == 3, reportingCurrency.allSatisfy({ $0.isASCII && $0.isUppercase }) else {
            throw ConfigurationError.invalid("revenue.reportingCurrency must be an ISO 4217 code such as USD")
        }
        lifecycle = try LifecycleConfiguration(reader: reader.scoped(to: "lifecycle"))
        reports = try ReportsConfiguration.read(reader: reader.scoped(to: "reports"))
        console = try ConsoleConfiguration(reader: reader.scoped(to: "console"))
        let decline = try reader.int("risk.declineRefundsFrom", in: 0...1_000, default: 0)
        risk = RiskPolicy(
            refundsToReview: try reader.int("risk.refundsToReview", in: 1...1_000, default: 3),
            refundRatePermille: try reader.int("risk.refundRatePermille", in: 0...1_000, default: 300),
            mergedGuestsToReview: try reader.int("risk.mergedGuestsToReview", in: 2...1_000, default: 3),
            declineRefundsFrom: decline == 0 ? nil : decline
        )
        let hooks = try reader.list("webhooks") ?? []
        for name in hooks where name.isEmpty || name.utf8.count > 64 || name.contains(".") || Set(hooks).count != hooks.count {
            throw ConfigurationError.invalid("webhooks: \(name) is not a usable, unique endpoint name")
        }
        webhooks = try hooks.map { try WebhookConfiguration(name: $0, reader: reader.scoped(to: "webhooks").scoped(to: $0), apps: apps) }
        dataRetention = try DataRetentionConfiguration(reader: reader.scoped(to: "dataRetention"))
        logLevel = try Self.logLevel(reader: configReader)
        try validate()
    }

    /// `log.level` (`LOG_LEVEL`: trace, debug, info, notice, warning, error or critical; default info), readable
    /// before the rest so that a start that fails on another key still logs at the level asked for.
    public static func logLevel(reader: ConfigReader) throws -> Logger.Level {
        let name = try StrictConfigReader(reader).choice("log.level", Logger.Level.allCases.map(\.rawValue), default: "info")
        return Logger.Level(rawValue: name) ?? .info
    }

    public func validate() throws {
        if apps.isEmpty { throw ConfigurationError.invalid("at least one app is required") }
        if Set(apps.map(\.bundleId)).count != apps.count { throw ConfigurationError.invalid("two apps share a bundle id") }
        if !(1...65535).contains(port) && port != 0 { throw ConfigurationError.invalid("http.port \(port) is out of range") }
        if maxBodyBytes < 1024 { throw ConfigurationError.invalid("http.maxBodyBytes must be at least 1024") }
    }
}

/// A configuration Storekeeper refuses to start with.
public enum ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    case missing(String)
    case invalid(String)

    public var description: String {
        switch self {
        case .missing(let key): "missing configuration: \(key)"
        case .invalid(let reason): "invalid configuration: \(reason)"
        }
    }
}

extension ServerConfiguration {
    /// `2026-01-01/2027-01-01` (the end excluded) or `2026-01-01/` (still in it), dates in UTC.
    public static func programPeriod(_ text: String) throws -> SmallBusinessProgram.Period {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        func day(_ value: String) -> Date? {
            guard value.utf8.count == 10 else { return nil }
            return try? Date(value + "T00:00:00Z", strategy: .iso8601)
        }
        guard parts.count == 2, let start = day(parts[0]), parts[1].isEmpty || day(parts[1]) != nil else {
            throw ConfigurationError.invalid("revenue.smallBusinessProgram entries are YYYY-MM-DD/YYYY-MM-DD or YYYY-MM-DD/")
        }
        let end = parts[1].isEmpty ? nil : day(parts[1])
        if let end, end <= start {
            throw ConfigurationError.invalid("revenue.smallBusinessProgram: \(text) ends before it starts")
        }
        return .init(start: start, end: end)
    }
}
