import AppStoreWire
import Configuration
import Crypto
import Foundation
import Logging
import StorekeeperCore
import StorekeeperServer
import StorekeeperStorage
import Testing

/// Every configuration key README documents, read through the environment and through a JSON file in the form
/// README shows; a value of the wrong type stops the start naming its key (issue 13, items 15 and 17).
@Suite struct ConfigurationKeysTests {
    /// One documented key: its environment name and value, its JSON value, and how to see it was read.
    struct Key {
        let dotted: String
        let environment: String
        let environmentValue: String
        let json: Any
        let check: @Sendable (ServerConfiguration) -> Bool
    }

    static func files() throws -> (directory: URL, root: String, p8: String, es256: String, catalog: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sk-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let root = directory.appendingPathComponent("root.pem").path
        try String(contentsOf: ServerHarness.catalogURL.appendingPathComponent("sample-root.pem"), encoding: .utf8)
            .write(toFile: root, atomically: true, encoding: .utf8)
        let p8 = directory.appendingPathComponent("key.p8").path
        try P256.Signing.PrivateKey().pemRepresentation.write(toFile: p8, atomically: true, encoding: .utf8)
        let es256 = directory.appendingPathComponent("es256.pem").path
        try P256.Signing.PrivateKey().publicKey.pemRepresentation.write(toFile: es256, atomically: true, encoding: .utf8)
        let catalog = ServerHarness.catalogURL.appendingPathComponent("storekeeper-catalog.json").path
        return (directory, root, p8, es256, catalog)
    }

    static let webhookSecret = "whsec-0123456789abcdef0123456789abcdef"

    static func keys(root: String, p8: String, es256: String, catalog: String) -> [Key] {
        let hs256 = String(repeating: "h", count: 40)
        return [
            Key(dotted: "http.host", environment: "HTTP_HOST", environmentValue: "0.0.0.0", json: "0.0.0.0") { $0.host == "0.0.0.0" },
            Key(dotted: "http.port", environment: "HTTP_PORT", environmentValue: "9191", json: 9191) { $0.port == 9191 },
            Key(dotted: "http.maxBodyBytes", environment: "HTTP_MAX_BODY_BYTES", environmentValue: "4096", json: 4096) { $0.maxBodyBytes == 4096 },
            Key(dotted: "http.trustedProxies", environment: "HTTP_TRUSTED_PROXIES", environmentValue: "10.0.0.1,::1", json: "10.0.0.1,::1") {
                $0.trustedProxies == ["10.0.0.1", "::1"]
            },
            Key(dotted: "db.kind", environment: "DB_KIND", environmentValue: "postgres", json: "postgres") {
                $0.database == .postgres(url: "postgres://u:p@127.0.0.1:5432/sk")
            },
            Key(
                dotted: "db.postgres.url",
                environment: "DB_POSTGRES_URL",
                environmentValue: "postgres://u:p@127.0.0.1:5432/sk",
                json: "postgres://u:p@127.0.0.1:5432/sk"
            ) { _ in true },
            Key(dotted: "db.postgres.tls", environment: "DB_POSTGRES_TLS", environmentValue: "require", json: "require") {
                $0.postgresTLS.mode == .require
            },
            Key(dotted: "db.postgres.tlsRootCertificate", environment: "DB_POSTGRES_TLS_ROOT_CERTIFICATE", environmentValue: root, json: root) {
                $0.postgresTLS.caFile == root
            },
            Key(dotted: "db.postgres.maxConnections", environment: "DB_POSTGRES_MAX_CONNECTIONS", environmentValue: "8", json: 8) {
                $0.postgresMaximumConnections == 8
            },
            Key(dotted: "catalog.file", environment: "CATALOG_FILE", environmentValue: catalog, json: catalog) { $0.catalogFile == catalog },
            Key(dotted: "catalog.refreshSeconds", environment: "CATALOG_REFRESH_SECONDS", environmentValue: "7", json: 7) {
                $0.catalogRefreshInterval == .seconds(7)
            },
            Key(
                dotted: "apps.main.appStore.bundleId",
                environment: "APPS_MAIN_APP_STORE_BUNDLE_ID",
                environmentValue: "com.example.keys",
                json: "com.example.keys"
            ) {
                $0.apps.first?.bundleId == "com.example.keys"
            },
            Key(dotted: "apps.main.appStore.appAppleId", environment: "APPS_MAIN_APP_STORE_APP_APPLE_ID", environmentValue: "4242", json: 4242) {
                $0.apps.first?.appAppleId == 4242
            },
            Key(dotted: "apps.main.deployment", environment: "APPS_MAIN_DEPLOYMENT", environmentValue: "development", json: "development") {
                $0.apps.first?.deployment == .development
            },
            Key(dotted: "apps.main.appStore.extraRoots", environment: "APPS_MAIN_APP_STORE_EXTRA_ROOTS", environmentValue: root, json: root) {
                $0.apps.first?.extraRootFiles == [root]
            },
            Key(dotted: "apps.main.appStore.allowSandbox", environment: "APPS_MAIN_APP_STORE_ALLOW_SANDBOX", environmentValue: "false", json: false) {
                $0.apps.first?.allowSandbox == false
            },
            Key(
                dotted: "apps.main.appStore.sharedSecret",
                environment: "APPS_MAIN_APP_STORE_SHARED_SECRET",
                environmentValue: "shared-secret-1",
                json: "shared-secret-1"
            ) {
                $0.apps.first?.sharedSecret == "shared-secret-1"
            },
            Key(
                dotted: "apps.main.appStore.verifyReceipt.productionURL",
                environment: "APPS_MAIN_APP_STORE_VERIFY_RECEIPT_PRODUCTION_URL",
                environmentValue: "http://127.0.0.1:1/verifyReceipt",
                json: "http://127.0.0.1:1/verifyReceipt"
            ) {
                $0.apps.first?.verifyReceiptProductionURL.absoluteString == "http://127.0.0.1:1/verifyReceipt"
            },
            Key(
                dotted: "apps.main.appStore.verifyReceipt.sandboxURL",
                environment: "APPS_MAIN_APP_STORE_VERIFY_RECEIPT_SANDBOX_URL",
                environmentValue: "http://127.0.0.1:1/sandbox/verifyReceipt",
                json: "http://127.0.0.1:1/sandbox/verifyReceipt"
            ) {
                $0.apps.first?.verifyReceiptSandboxURL.absoluteString == "http://127.0.0.1:1/sandbox/verifyReceipt"
            },
            Key(dotted: "apps.main.appStore.apiKey.id", environment: "APPS_MAIN_APP_STORE_API_KEY_ID", environmentValue: "KEY123", json: "KEY123") {
                $0.apps.first?.apiKeyId == "KEY123"
            },
            Key(
                dotted: "apps.main.appStore.apiKey.issuer",
                environment: "APPS_MAIN_APP_STORE_API_KEY_ISSUER",
                environmentValue: "issuer-1",
                json: "issuer-1"
            ) {
                $0.apps.first?.apiIssuerId == "issuer-1"
            },
            Key(dotted: "apps.main.appStore.apiKey.path", environment: "APPS_MAIN_APP_STORE_API_KEY_PATH", environmentValue: p8, json: p8) {
                $0.apps.first?.apiKeyPath == p8
            },
            Key(
                dotted: "apps.main.appStore.serverAPI.url",
                environment: "APPS_MAIN_APP_STORE_SERVER_API_URL",
                environmentValue: "http://127.0.0.1:2",
                json: "http://127.0.0.1:2"
            ) {
                $0.apps.first?.serverAPIURL?.absoluteString == "http://127.0.0.1:2"
            },
            Key(dotted: "auth.jwt.hs256Secret", environment: "AUTH_JWT_HS256SECRET", environmentValue: hs256, json: hs256) {
                $0.auth.jwtHS256Secret == hs256
            },
            Key(dotted: "auth.jwt.es256PublicKey", environment: "AUTH_JWT_ES256PUBLIC_KEY", environmentValue: es256, json: es256) {
                $0.auth.jwtES256PublicKeyPEM?.contains("PUBLIC KEY") == true
            },
            Key(dotted: "auth.answerSigningKey", environment: "AUTH_ANSWER_SIGNING_KEY", environmentValue: p8, json: p8) {
                $0.auth.answerSigningKeyPEM?.contains("PRIVATE KEY") == true
            },
            Key(dotted: "auth.jwt.issuer", environment: "AUTH_JWT_ISSUER", environmentValue: "backend", json: "backend") {
                $0.auth.jwtIssuer == "backend"
            },
            Key(dotted: "auth.jwt.audience", environment: "AUTH_JWT_AUDIENCE", environmentValue: "storekeeper", json: "storekeeper") {
                $0.auth.jwtAudience == "storekeeper"
            },
            Key(
                dotted: "auth.apiKeys",
                environment: "AUTH_API_KEYS",
                environmentValue: "backend:api-key-0123456789abcdef,other:api-key-fedcba9876543210",
                json: "backend:api-key-0123456789abcdef,other:api-key-fedcba9876543210"
            ) {
                $0.auth.apiKeys == ["backend": "api-key-0123456789abcdef", "other": "api-key-fedcba9876543210"]
            },
            Key(
                dotted: "auth.adminKeys",
                environment: "AUTH_ADMIN_KEYS",
                environmentValue: "ops:admin-key-0123456789abcdef",
                json: "ops:admin-key-0123456789abcdef"
            ) { $0.auth.adminKeys == ["ops": "admin-key-0123456789abcdef"] },
            Key(
                dotted: "auth.guestsPerAddressPerHour",
                environment: "AUTH_GUESTS_PER_ADDRESS_PER_HOUR",
                environmentValue: "5",
                json: 5
            ) { $0.auth.guestsPerAddressPerHour == 5 },
            Key(dotted: "auth.guestLifetimeDays", environment: "AUTH_GUEST_LIFETIME_DAYS", environmentValue: "0", json: 0) {
                $0.auth.idleGuestLifetime == nil
            },
            Key(
                dotted: "auth.adminKeyScopes",
                environment: "AUTH_ADMIN_KEY_SCOPES",
                environmentValue: "ops:events:read+users:read",
                json: "ops:events:read+users:read"
            ) { $0.auth.adminKeyScopes == ["ops": [.eventsRead, .usersRead]] },
            Key(dotted: "auth.guests", environment: "AUTH_GUESTS", environmentValue: "false", json: false) { $0.auth.allowGuests == false },
            Key(dotted: "auth.legacyGuestClaims", environment: "AUTH_LEGACY_GUEST_CLAIMS", environmentValue: "false", json: false) {
                $0.auth.allowLegacyGuestClaims == false
            },
            Key(dotted: "policy.transfer", environment: "POLICY_TRANSFER", environmentValue: "transfer", json: "transfer") {
                $0.transferPolicy == .transfer
            },
            Key(dotted: "log.level", environment: "LOG_LEVEL", environmentValue: "debug", json: "debug") { $0.logLevel == .debug },
            Key(dotted: "orders.lifetimeSeconds", environment: "ORDERS_LIFETIME_SECONDS", environmentValue: "600", json: 600) {
                $0.orderLifetime == .seconds(600)
            },
            Key(dotted: "lifecycle.coinClawback", environment: "LIFECYCLE_COIN_CLAWBACK", environmentValue: "floor", json: "floor") {
                $0.lifecycle.coinClawback == .floor
            },
            Key(dotted: "lifecycle.catchUpSeconds", environment: "LIFECYCLE_CATCH_UP_SECONDS", environmentValue: "120", json: 120) {
                $0.lifecycle.catchUpInterval == .seconds(120)
            },
            Key(dotted: "lifecycle.catchUpLookbackDays", environment: "LIFECYCLE_CATCH_UP_LOOKBACK_DAYS", environmentValue: "90", json: 90) {
                $0.lifecycle.catchUpLookback == 90 * 86_400
            },
            Key(dotted: "lifecycle.sweepSeconds", environment: "LIFECYCLE_SWEEP_SECONDS", environmentValue: "0", json: 0) {
                $0.lifecycle.sweepInterval == nil
            },
            Key(
                dotted: "lifecycle.consumption.customerConsented",
                environment: "LIFECYCLE_CONSUMPTION_CUSTOMER_CONSENTED",
                environmentValue: "true",
                json: true
            ) { $0.lifecycle.customerConsented },
            Key(
                dotted: "lifecycle.consumption.refundPreference.consumable",
                environment: "LIFECYCLE_CONSUMPTION_REFUND_PREFERENCE_CONSUMABLE",
                environmentValue: "DECLINE",
                json: "DECLINE"
            ) { $0.lifecycle.refundPreference[.consumable] == "DECLINE" },
            Key(dotted: "lifecycle.consumption.api", environment: "LIFECYCLE_CONSUMPTION_API", environmentValue: "v1", json: "v1") {
                $0.lifecycle.consumptionAPIVersion == "v1"
            },
            Key(
                dotted: "lifecycle.consumption.intervalSeconds",
                environment: "LIFECYCLE_CONSUMPTION_INTERVAL_SECONDS",
                environmentValue: "45",
                json: 45
            ) {
                $0.lifecycle.consumptionInterval == .seconds(45)
            },
            Key(dotted: "reports.vendorNumber", environment: "REPORTS_VENDOR_NUMBER", environmentValue: "85012345", json: "85012345") {
                $0.reports?.vendorNumber == "85012345"
            },
            Key(dotted: "reports.key.id", environment: "REPORTS_KEY_ID", environmentValue: "TEAMKEY9", json: "TEAMKEY9") {
                $0.reports?.keyId == "TEAMKEY9"
            },
            Key(dotted: "reports.key.issuer", environment: "REPORTS_KEY_ISSUER", environmentValue: "team-issuer", json: "team-issuer") {
                $0.reports?.issuerId == "team-issuer"
            },
            Key(dotted: "reports.key.path", environment: "REPORTS_KEY_PATH", environmentValue: p8, json: p8) {
                $0.reports?.privateKeyPEM.contains("PRIVATE KEY") == true
            },
            Key(dotted: "reports.url", environment: "REPORTS_URL", environmentValue: "http://127.0.0.1:8090", json: "http://127.0.0.1:8090") {
                $0.reports?.url == "http://127.0.0.1:8090"
            },
            Key(dotted: "reports.reconcileSeconds", environment: "REPORTS_RECONCILE_SECONDS", environmentValue: "0", json: 0) {
                $0.reports != nil && $0.reports?.reconcileInterval == nil
            },
            Key(
                dotted: "reports.transactionLookupsPerDay",
                environment: "REPORTS_TRANSACTION_LOOKUPS_PER_DAY",
                environmentValue: "50",
                json: 50
            ) { $0.reports?.transactionLookupsPerDay == 50 },
            Key(dotted: "reports.lookbackDays", environment: "REPORTS_LOOKBACK_DAYS", environmentValue: "5", json: 5) {
                $0.reports?.lookbackDays == 5
            },
            Key(dotted: "reports.analyticsReports", environment: "REPORTS_ANALYTICS_REPORTS", environmentValue: "false", json: false) {
                $0.reports?.analyticsReports == false
            },
            Key(dotted: "dataRetention.eventDays", environment: "DATA_RETENTION_EVENT_DAYS", environmentValue: "7", json: 7) {
                $0.dataRetention.events == .seconds(7 * 86_400)
            },
            Key(dotted: "dataRetention.notificationDays", environment: "DATA_RETENTION_NOTIFICATION_DAYS", environmentValue: "0", json: 0) {
                $0.dataRetention.notifications == nil
            },
            Key(dotted: "dataRetention.auditDays", environment: "DATA_RETENTION_AUDIT_DAYS", environmentValue: "400", json: 400) {
                $0.dataRetention.audit == .seconds(400 * 86_400)
            },
            Key(dotted: "dataRetention.intervalSeconds", environment: "DATA_RETENTION_INTERVAL_SECONDS", environmentValue: "0", json: 0) {
                $0.dataRetention.interval == nil
            },
            Key(dotted: "dataRetention.batchSize", environment: "DATA_RETENTION_BATCH_SIZE", environmentValue: "250", json: 250) {
                $0.dataRetention.batchSize == 250
            },
            Key(
                dotted: "console.operators",
                environment: "CONSOLE_OPERATORS",
                environmentValue: "ann:support:0123456789abcdefgh",
                json: ["ann:support:0123456789abcdefgh"]
            ) {
                $0.console.operators.first?.name == "ann" && $0.console.operators.first?.role == .support
            },
            Key(dotted: "risk.declineRefundsFrom", environment: "RISK_DECLINE_REFUNDS_FROM", environmentValue: "4", json: 4) {
                $0.risk.declineRefundsFrom == 4
            },
            Key(dotted: "risk.refundsToReview", environment: "RISK_REFUNDS_TO_REVIEW", environmentValue: "5", json: 5) {
                $0.risk.refundsToReview == 5
            },
            Key(dotted: "console.sessionMinutes", environment: "CONSOLE_SESSION_MINUTES", environmentValue: "30", json: 30) {
                $0.console.sessionLifetime == .seconds(1_800)
            },
            Key(dotted: "reports.timeZone", environment: "REPORTS_TIME_ZONE", environmentValue: "Europe/Paris", json: "Europe/Paris") {
                $0.reports?.calendar.timeZone.identifier == "Europe/Paris"
            },
            Key(dotted: "lifecycle.metricsSeconds", environment: "LIFECYCLE_METRICS_SECONDS", environmentValue: "5", json: 5) {
                $0.lifecycle.metricsInterval == .seconds(5)
            },
            Key(dotted: "lifecycle.analyticsSeconds", environment: "LIFECYCLE_ANALYTICS_SECONDS", environmentValue: "0", json: 0) {
                $0.lifecycle.analyticsInterval == nil
            },
            Key(dotted: "revenue.reportingCurrency", environment: "REVENUE_REPORTING_CURRENCY", environmentValue: "EUR", json: "EUR") {
                $0.reportingCurrency == "EUR"
            },
            Key(dotted: "lifecycle.maxAttempts", environment: "LIFECYCLE_MAX_ATTEMPTS", environmentValue: "3", json: 3) {
                $0.lifecycle.maxAttempts == 3
            },
            Key(dotted: "lifecycle.batchSize", environment: "LIFECYCLE_BATCH_SIZE", environmentValue: "64", json: 64) {
                $0.lifecycle.batchSize == 64
            },
            Key(dotted: "lifecycle.pollMilliseconds", environment: "LIFECYCLE_POLL_MILLISECONDS", environmentValue: "500", json: 500) {
                $0.lifecycle.pollInterval == .milliseconds(500)
            },
            Key(dotted: "lifecycle.process", environment: "LIFECYCLE_PROCESS", environmentValue: "false", json: false) {
                $0.lifecycle.processNotifications == false
            },
            // The endpoint `crm` (named by WEBHOOKS in the environment, by the object's key in JSON).
            Key(
                dotted: "webhooks.crm.url",
                environment: "WEBHOOKS_CRM_URL",
                environmentValue: "https://crm.example.com/storekeeper",
                json: "https://crm.example.com/storekeeper"
            ) { $0.webhooks.first?.url.absoluteString == "https://crm.example.com/storekeeper" },
            Key(dotted: "webhooks.crm.secrets", environment: "WEBHOOKS_CRM_SECRETS", environmentValue: webhookSecret, json: [webhookSecret]) {
                $0.webhooks.first?.secrets == [webhookSecret]
            },
            Key(dotted: "webhooks.crm.kind", environment: "WEBHOOKS_CRM_KIND", environmentValue: "events", json: "events") {
                $0.webhooks.first?.kind == .events
            },
            Key(
                dotted: "webhooks.crm.events",
                environment: "WEBHOOKS_CRM_EVENTS",
                environmentValue: "purchase.*,wallet.changed",
                json: ["purchase.*", "wallet.changed"]
            ) { $0.webhooks.first?.eventTypes == ["purchase.*", "wallet.changed"] },
            Key(dotted: "webhooks.crm.apps", environment: "WEBHOOKS_CRM_APPS", environmentValue: "main", json: ["main"]) {
                $0.webhooks.first?.bundleIds == [$0.apps[0].bundleId]
            },
            Key(dotted: "webhooks.crm.concurrency", environment: "WEBHOOKS_CRM_CONCURRENCY", environmentValue: "16", json: 16) {
                $0.webhooks.first?.concurrency == 16
            },
            Key(dotted: "webhooks.crm.timeoutSeconds", environment: "WEBHOOKS_CRM_TIMEOUT_SECONDS", environmentValue: "5", json: 5) {
                $0.webhooks.first?.timeout == .seconds(5)
            },
            Key(dotted: "webhooks.crm.maxAgeHours", environment: "WEBHOOKS_CRM_MAX_AGE_HOURS", environmentValue: "24", json: 24) {
                $0.webhooks.first?.maximumAge == .seconds(24 * 3_600)
            },
        ]
    }

    /// Puts `value` at the dotted path of a nested JSON object.
    static func set(_ value: Any, at path: [String], in object: inout [String: Any]) {
        guard let first = path.first else { return }
        if path.count == 1 {
            object[first] = value
            return
        }
        var child = object[first] as? [String: Any] ?? [:]
        set(value, at: Array(path.dropFirst()), in: &child)
        object[first] = child
    }

    static func write(_ object: [String: Any], in directory: URL) throws -> String {
        let url = directory.appendingPathComponent("storekeeper-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: object).write(to: url)
        return url.path
    }

    // MARK: Tests

    @Test("every README key is read through the environment")
    func environment() async throws {
        let (directory, root, p8, es256, catalog) = try Self.files()
        let keys = Self.keys(root: root, p8: p8, es256: es256, catalog: catalog)
        var environment: [String: String] = ["WEBHOOKS": "crm"]
        for key in keys { environment[key.environment] = key.environmentValue }
        let configuration = try ServerConfiguration(reader: try await ServerConfiguration.reader(environment: environment, file: nil))
        for key in keys { #expect(key.check(configuration), "\(key.dotted) (\(key.environment))") }
        try? FileManager.default.removeItem(at: directory)
    }

    @Test("every README key is read from a JSON file in the form README shows")
    func file() async throws {
        let (directory, root, p8, es256, catalog) = try Self.files()
        let keys = Self.keys(root: root, p8: p8, es256: es256, catalog: catalog)
        var object: [String: Any] = [:]
        for key in keys { Self.set(key.json, at: key.dotted.split(separator: ".").map(String.init), in: &object) }
        let path = try Self.write(object, in: directory)
        let configuration = try ServerConfiguration(reader: try await ServerConfiguration.reader(environment: [:], file: path))
        for key in keys { #expect(key.check(configuration), "\(key.dotted) in JSON") }
        // Lists may also be JSON arrays.
        var arrays = object
        Self.set(["ops:admin-key-0123456789abcdef", "ci:admin-key-abcdef0123456789"], at: ["auth", "adminKeys"], in: &arrays)
        let fromArrays = try ServerConfiguration(
            reader: try await ServerConfiguration.reader(environment: [:], file: try Self.write(arrays, in: directory))
        )
        #expect(fromArrays.auth.adminKeys == ["ops": "admin-key-0123456789abcdef", "ci": "admin-key-abcdef0123456789"])
        try? FileManager.default.removeItem(at: directory)
    }

    @Test("a value of the wrong type or out of range stops the start, naming its key")
    func refusedValues() async throws {
        let (directory, root, p8, es256, catalog) = try Self.files()
        let keys = Self.keys(root: root, p8: p8, es256: es256, catalog: catalog)
        var base: [String: Any] = [:]
        for key in keys { Self.set(key.json, at: key.dotted.split(separator: ".").map(String.init), in: &base) }
        let wrong: [(String, Any)] = [
            ("auth.adminKeys", 42), ("http.port", "eighty"), ("http.port", 70_000), ("apps.main.appStore.allowSandbox", "yes"),
            ("catalog.refreshSeconds", 0), ("lifecycle.batchSize", -1), ("db.postgres.tls", "sometimes"),
            ("lifecycle.maxAttempts", 1_000_000), ("auth.apiKeys", ["backend:short"]), ("log.level", "loud"),
            ("reports.vendorNumber", "ninety"), ("reports.lookbackDays", 90),
            ("reports.timeZone", "Mars/Olympus"), ("console.operators", ["ann:boss:0123456789abcdefgh"]), ("console.sessionMinutes", 1),
            ("risk.refundRatePermille", 1_001), ("webhooks.crm.url", "ftp://crm.example.com"), ("webhooks.crm.events", ["purchase.nothing"]),
            ("webhooks.crm.secrets", ["short"]), ("webhooks.crm.apps", ["nowhere"]), ("webhooks.crm.concurrency", 0),
        ]
        for (dotted, value) in wrong {
            var object = base
            Self.set(value, at: dotted.split(separator: ".").map(String.init), in: &object)
            let path = try Self.write(object, in: directory)
            do {
                _ = try ServerConfiguration(reader: try await ServerConfiguration.reader(environment: [:], file: path))
                Issue.record("\(dotted) = \(value) was accepted")
            } catch let error as ConfigurationError {
                #expect(error.description.contains(dotted), "\(dotted): \(error)")
            }
        }
        // The environment too.
        do {
            _ = try ServerConfiguration(
                reader: try await ServerConfiguration.reader(
                    environment: [
                        "APPS_MAIN_APP_STORE_BUNDLE_ID": "com.example", "APPS_MAIN_APP_STORE_APP_APPLE_ID": "1", "CATALOG_REFRESH_SECONDS": "0",
                    ],
                    file: nil
                )
            )
            Issue.record("catalog.refreshSeconds = 0 was accepted")
        } catch let error as ConfigurationError {
            #expect(error.description.contains("catalog.refreshSeconds"))
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
