import Configuration
import Foundation
import StorekeeperCore

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
    /// Larger request bodies are refused with 413.
    public var maxBodyBytes: Int
    /// How often each process reloads the catalog others may have changed.
    public var catalogRefreshInterval: Duration
    /// Notifications, refunds, the renewal sweep, catch-up and consumption answers.
    public var lifecycle: LifecycleConfiguration

    public init(
        host: String = "127.0.0.1", port: Int = 8080, database: Database = .sqlite(path: "storekeeper.sqlite"),
        catalogFile: String? = nil, apps: [AppConfiguration], auth: AuthConfiguration,
        transferPolicy: TransferPolicy = .refuse, orderLifetime: Duration = .seconds(86_400),
        maxBodyBytes: Int = 1 << 20, catalogRefreshInterval: Duration = .seconds(5),
        lifecycle: LifecycleConfiguration = LifecycleConfiguration()
    ) {
        self.lifecycle = lifecycle
        self.host = host
        self.port = port
        self.database = database
        self.catalogFile = catalogFile
        self.apps = apps
        self.auth = auth
        self.transferPolicy = transferPolicy
        self.orderLifetime = orderLifetime
        self.maxBodyBytes = maxBodyBytes
        self.catalogRefreshInterval = catalogRefreshInterval
    }

    /// Reads the configuration. Keys (environment form in parentheses):
    /// - `http.host` (`HTTP_HOST`, default 127.0.0.1), `http.port` (`HTTP_PORT`, 8080),
    ///   `http.maxBodyBytes` (`HTTP_MAX_BODY_BYTES`, 1048576)
    /// - `db.kind` (`DB_KIND`: `sqlite` or `postgres`), `db.sqlite.path` (`DB_SQLITE_PATH`, storekeeper.sqlite;
    ///   `:memory:` for a throwaway database), `db.postgres.url` (`DB_POSTGRES_URL`, secret)
    /// - `catalog.file` (`CATALOG_FILE`), `catalog.refreshSeconds` (`CATALOG_REFRESH_SECONDS`, 5)
    /// - `apps` (`APPS`, comma-separated names, default `main`), then each app under `apps.<name>.*`
    ///   (see ``AppConfiguration/init(name:reader:)``)
    /// - `auth.*` (see ``AuthConfiguration/init(reader:)``)
    /// - `policy.transfer` (`POLICY_TRANSFER`: `refuse` or `transfer`), `orders.lifetimeSeconds`
    ///   (`ORDERS_LIFETIME_SECONDS`, 86400)
    /// - `lifecycle.*` (see ``LifecycleConfiguration/init(reader:)``)
    public init(reader: ConfigReader) throws {
        host = reader.string(forKey: "http.host", default: "127.0.0.1")
        port = reader.int(forKey: "http.port", default: 8080)
        maxBodyBytes = reader.int(forKey: "http.maxBodyBytes", default: 1 << 20)
        switch reader.string(forKey: "db.kind", default: "sqlite") {
        case "sqlite":
            let path = reader.string(forKey: "db.sqlite.path", default: "storekeeper.sqlite")
            database = path == ":memory:" ? .sqliteInMemory : .sqlite(path: path)
        case "postgres":
            guard let url = reader.string(forKey: "db.postgres.url", isSecret: true) else {
                throw ConfigurationError.missing("db.postgres.url (DB_POSTGRES_URL)")
            }
            database = .postgres(url: url)
        case let other:
            throw ConfigurationError.invalid("db.kind must be sqlite or postgres, not \(other)")
        }
        catalogFile = reader.string(forKey: "catalog.file")
        catalogRefreshInterval = .seconds(reader.int(forKey: "catalog.refreshSeconds", default: 5))
        let names = reader.stringArray(forKey: "apps", default: ["main"])
        apps = try names.map { try AppConfiguration(name: $0, reader: reader.scoped(to: ConfigKey(["apps", $0]))) }
        auth = try AuthConfiguration(reader: reader.scoped(to: "auth"))
        let policy = reader.string(forKey: "policy.transfer", default: "refuse")
        guard let transferPolicy = TransferPolicy(rawValue: policy) else {
            throw ConfigurationError.invalid("policy.transfer must be refuse or transfer, not \(policy)")
        }
        self.transferPolicy = transferPolicy
        orderLifetime = .seconds(reader.int(forKey: "orders.lifetimeSeconds", default: 86_400))
        lifecycle = try LifecycleConfiguration(reader: reader.scoped(to: "lifecycle"))
        try validate()
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
