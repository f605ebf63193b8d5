import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import PostgresNIO
import ServiceLifecycle
import StorekeeperAPI
import StorekeeperCore
import StorekeeperServer
import StorekeeperStorage
import StorekeeperTestSupport
import Synchronization
import Testing

/// The database a test server runs on.
enum TestDatabase: String, CustomStringConvertible, CaseIterable {
    case sqlite
    case postgres

    var description: String { rawValue }

    /// SQLite always; PostgreSQL when `POSTGRES_PORT` is set (CI starts Debian's postgresql).
    static var available: [TestDatabase] {
        ProcessInfo.processInfo.environment["POSTGRES_PORT"] == nil ? [.sqlite] : [.sqlite, .postgres]
    }
}

/// Identities the simulator signs with, generated once per test process (RSA receipt keys are slow to make).
enum SharedIdentities {
    static let chain = try! AppStoreSigningChain.generate(.init(name: "Server Test Simulator"))
    static let receipts = try! ReceiptSigningIdentity.generate()
    static let apiKey = P256.Signing.PrivateKey()
    static let apiKeyId = "TESTKEY001"
    static let issuerId = "0b6e5a1c-51b2-4bd2-9f39-4a2f4d3c2b1a"
}

/// A running Storekeeper server wired to a running simulator (real sockets on loopback), for end-to-end tests.
struct ServerHarness: Sendable {
    static let hs256Secret = "server-test-hs256-secret-0123456789abcdef"
    static let adminKey = "admin-key-0123456789abcdef"
    static let apiKey = "backend-key-0123456789abcdef"
    static let catalogURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Samples")

    let store: SimulatedAppStore
    let faults: AppleEndpointFaults
    let serverURL: String
    /// Every instance's URL when several servers share the database.
    let serverURLs: [String]
    let simulatorURL: String
    let database: TestDatabase
    let databaseConfiguration: ServerConfiguration.Database

    static func simulatorCatalog() throws -> SimulatorCatalog {
        try SimulatorCatalog.load(from: catalogURL.appendingPathComponent("simulator-catalog.json"))
    }

    /// Runs `body` with a fresh simulator and a fresh server on `database`.
    /// At most this many harness servers at once. Each holds a database (on SQLite a writer and two readers, with a
    /// WAL and a shared-memory file each) and sockets; unbounded, the parallel suite held over 2,000 descriptors, and
    /// past about 1,300 Foundation's `Process.run()` (the CLI and interop tests) can crash listing /proc/self/fd (a
    /// 256-byte over-read, swift-corelibs-foundation PR #5472, not in Swift 6.3.1).
    static let slots = AsyncSlots(16)

    static func run(
        _ database: TestDatabase,
        environment: AppStoreEnvironment = .sandbox,
        instances: Int = 1,
        catalog: SimulatorCatalog? = nil,
        configure: @Sendable (inout ServerConfiguration) -> Void = { _ in },
        _ body: @Sendable (ServerHarness) async throws -> Void
    ) async throws {
        try await slots.holding {
            try await runHolding(database, environment: environment, instances: instances, catalog: catalog, configure: configure, body)
        }
    }

    private static func runHolding(
        _ database: TestDatabase,
        environment: AppStoreEnvironment,
        instances: Int,
        catalog: SimulatorCatalog?,
        configure: @Sendable (inout ServerConfiguration) -> Void,
        _ body: @Sendable (ServerHarness) async throws -> Void
    ) async throws {
        let store = try SimulatedAppStore(
            catalog: try catalog ?? simulatorCatalog(),
            signingChain: SharedIdentities.chain,
            seed: UInt64.random(in: 1...1_000_000),
            start: Date().addingTimeInterval(-60),
            environment: environment
        )
        let faults = AppleEndpointFaults()
        let apple = SimulatorServer.AppleSide(
            apiKeys: [SharedIdentities.apiKeyId: SharedIdentities.apiKey.publicKey],
            issuerId: SharedIdentities.issuerId,
            receiptIdentity: SharedIdentities.receipts,
            faults: faults
        )
        let simulatorKey = "sim-\(UUID().uuidString)"
        let simulatorApp = Application(
            router: await SimulatorServer.buildRouter(store: store, rootPEM: try SharedIdentities.chain.rootPEM(), apple: apple),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in PortRegistry.shared.publish(simulatorKey, channel.localAddress?.port ?? 0) },
            logger: quietLogger("simulator")
        )
        try await withRunning(simulatorApp, key: simulatorKey) { simulatorPort in
            let simulatorURL = "http://127.0.0.1:\(simulatorPort)"
            try await withDatabase(database) { databaseConfig in
                var configuration = try serverConfiguration(simulatorURL: simulatorURL, database: databaseConfig)
                configure(&configuration)
                try await withServers(count: instances, configuration: configuration) { ports in
                    try await body(
                        ServerHarness(
                            store: store,
                            faults: faults,
                            serverURL: "http://127.0.0.1:\(ports[0])",
                            serverURLs: ports.map { "http://127.0.0.1:\($0)" },
                            simulatorURL: simulatorURL,
                            database: database,
                            databaseConfiguration: configuration.database
                        )
                    )
                }
            }
        }
    }

    /// Starts `count` servers with one configuration (one database), nested, and runs `body` with their ports.
    static func withServers(
        count: Int,
        configuration: ServerConfiguration,
        ports: [Int] = [],
        _ body: ([Int]) async throws -> Void
    ) async throws {
        guard ports.count < count else { return try await body(ports) }
        let key = "server-\(UUID().uuidString)"
        let app = try await StorekeeperServer.buildApplication(
            configuration: configuration,
            logger: quietLogger("server"),
            onServerRunning: { port in PortRegistry.shared.publish(key, port) }
        )
        try await withRunning(app, key: key) { port in
            try await withServers(count: count, configuration: configuration, ports: ports + [port], body)
        }
    }

    static func serverConfiguration(simulatorURL: String, database: ServerConfiguration.Database) throws -> ServerConfiguration {
        let catalog = try simulatorCatalog()
        var configuration = ServerConfiguration(
            port: 0,
            database: database,
            catalogFile: catalogURL.appendingPathComponent("storekeeper-catalog.json").path,
            apps: [
                AppConfiguration(
                    bundleId: catalog.bundleId,
                    appAppleId: catalog.appAppleId,
                    deployment: .development,
                    extraRootsPEM: [try SharedIdentities.chain.rootPEM(), try SharedIdentities.receipts.rootPEM()],
                    apiKeyId: SharedIdentities.apiKeyId,
                    apiIssuerId: SharedIdentities.issuerId,
                    apiKeyPEM: SharedIdentities.apiKey.pemRepresentation,
                    verifyReceiptProductionURL: URL(string: simulatorURL + "/verifyReceipt")!,
                    verifyReceiptSandboxURL: URL(string: simulatorURL + "/sandbox/verifyReceipt")!,
                    serverAPIURL: URL(string: simulatorURL)!
                )
            ],
            auth: AuthConfiguration(
                jwtHS256Secret: hs256Secret,
                apiKeys: ["backend": apiKey],
                adminKeys: ["ops": adminKey]
            ),
            catalogRefreshInterval: .milliseconds(200),
            // Tests run many servers on one PostgreSQL at once: a small pool each keeps them under its max_connections.
            postgresMaximumConnections: 6,
            // Periodic jobs run on the simulator's clock, so tests run them on demand through the admin API.
            lifecycle: LifecycleConfiguration(
                pollInterval: .milliseconds(20),
                catchUpInterval: nil,
                sweepInterval: nil,
                consumptionInterval: nil,
                metricsInterval: nil,
                accountTokenInterval: nil,
                appTransactionInterval: nil
            )
        )
        // The simulator's App Store Connect takes its In-App Purchase key as the team key; days are reconciled on demand.
        configuration.reports = ReportsConfiguration(
            vendorNumber: SimulatorServer.AppleSide.defaultVendorNumber,
            keyId: SharedIdentities.apiKeyId,
            issuerId: SharedIdentities.issuerId,
            privateKeyPEM: SharedIdentities.apiKey.pemRepresentation,
            url: simulatorURL,
            reconcileInterval: nil
        )
        return configuration
    }

    /// A database for one test: a fresh SQLite file, or a fresh PostgreSQL database dropped afterwards.
    static func withDatabase(
        _ database: TestDatabase,
        _ body: (ServerConfiguration.Database) async throws -> Void
    ) async throws {
        switch database {
        case .sqlite:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("sk-\(UUID().uuidString).sqlite").path
            defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
            try await body(.sqlite(path: path))
        case .postgres:
            try await TestPostgres.withFreshDatabase { url in try await body(.postgres(url: url)) }
        }
    }

    /// Runs `app` until `body` returns.
    static func withRunning<App: ApplicationProtocol>(
        _ app: App,
        key: String,
        _ body: (Int) async throws -> Void
    ) async throws {
        let group = ServiceGroup(services: [app], gracefulShutdownSignals: [], logger: quietLogger("group"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                do {
                    try await group.run()
                } catch {
                    // A server that fails to start never publishes its port: fail the waiting test instead of hanging.
                    PortRegistry.shared.fail(key, error)
                    throw error
                }
                PortRegistry.shared.fail(key, PortRegistry.StoppedBeforeStarting())
            }
            let port = try await PortRegistry.shared.wait(key)
            do {
                try await body(port)
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    static func quietLogger(_ label: String) -> Logger {
        var logger = Logger(label: "test.\(label)")
        logger.logLevel = ProcessInfo.processInfo.environment["STOREKEEPER_TEST_LOG"] == nil ? .critical : .debug
        return logger
    }

    // MARK: Identities

    static func token(_ user: String) -> String {
        UserTokenVerifier.hs256Token(subject: user, secret: hs256Secret)
    }

    static func userHeaders(_ user: String) -> [(String, String)] { [("Authorization", "Bearer \(token(user))")] }
    static let adminHeaders: [(String, String)] = [("X-Admin-Key", adminKey)]

    // MARK: HTTP

    struct Reply {
        let status: Int
        let body: [String: Any]
        let text: String
        var headers = HTTPHeaders()

        subscript(key: String) -> Any? { body[key] }
        var code: String? { body["code"] as? String }
        var outcome: String? { body["outcome"] as? String }
        var delivery: [String: Any]? { body["delivery"] as? [String: Any] }
    }

    func call(
        _ method: HTTPMethod,
        _ path: String,
        json: Any? = nil,
        raw: String? = nil,
        headers: [(String, String)] = [],
        rawBody: String? = nil,
        instance: Int = 0
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: serverURLs[instance % serverURLs.count] + path)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let rawBody {
            // Sent as it is, with only the headers given.
            request.body = .bytes(ByteBuffer(string: rawBody))
        } else if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json)))
        } else if let raw {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: raw))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        let text = String(buffer: bytes)
        let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
        return Reply(status: Int(response.status.code), body: object, text: text, headers: response.headers)
    }

    /// `GET /v1/me` for a user token.
    func me(_ user: String) async throws -> Components.Schemas.User {
        try await api(Self.userHeaders(user)).getMe().ok.body.json
    }

    /// The user's coins, read through the generated client (see ``api(_:instance:)``).
    func coins(_ user: String) async throws -> Int {
        let me = try await api(Self.userHeaders(user)).getMe().ok.body.json
        return Int(me.wallet.additionalProperties["coins"] ?? -1)
    }

    func entitlement(_ name: String, of me: Components.Schemas.User) -> Components.Schemas.Entitlement? {
        me.entitlements.first { $0.entitlement == name }
    }

    /// For a `/v1/me` body read raw (a test that must send what the generated client cannot).
    func entitlement(_ name: String, of me: [String: Any]) -> [String: Any]? {
        (me["entitlements"] as? [[String: Any]])?.first { $0["entitlement"] as? String == name }
    }

    /// The user's audit trail, newest first, through the generated client.
    func audit(_ user: String) async throws -> [Components.Schemas.AuditEntry] {
        try await api(Self.adminHeaders).adminGetAudit(path: .init(id: user)).ok.body.json.entries
    }

    /// Creates an order for `user` and buys it on a simulator account with the order's `appAccountToken`.
    func orderAndBuy(_ productId: String, user: String, account: String) async throws -> (orderId: String, purchase: SimulatedPurchase) {
        let order = try await api(Self.userHeaders(user)).createOrder(body: .json(.init(productId: productId))).created.body.json
        let token = try #require(UUID(uuidString: order.appAccountToken))
        let purchase = try await store.purchase(productId: productId, account: account, appAccountToken: token)
        return (order.orderId, purchase)
    }

    /// `POST /v1/purchases` through the generated client: the answer must be a status and body the document lists
    /// for the operation (anything else fails the test), and is handed back as a ``Reply`` for the tests to read.
    func submit(
        _ jws: String,
        headers: [(String, String)],
        orderId: String? = nil,
        instance: Int = 0,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Reply {
        let output = try await api(headers, instance: instance)
            .submitPurchase(body: .json(.init(signedTransaction: jws, orderId: orderId)))
        let status: Int
        let body: any Encodable
        switch output {
        case .ok(let answer): (status, body) = (200, try answer.body.json)
        case .accepted(let answer): (status, body) = (202, try answer.body.json)
        case .badRequest(let answer): (status, body) = (400, try answer.body.json)
        case .unauthorized(let answer): (status, body) = (401, try answer.body.json)
        case .conflict(let answer): (status, body) = (409, try answer.body.json)
        case .contentTooLarge(let answer): (status, body) = (413, try answer.body.json)
        case .unprocessableContent(let answer): (status, body) = (422, try answer.body.json)
        case .internalServerError(let answer): (status, body) = (500, try answer.body.json)
        case .serviceUnavailable(let answer): (status, body) = (503, try answer.body.json)
        case .undocumented(let code, _):
            Issue.record("POST /v1/purchases answered \(code), which openapi.yaml does not list", sourceLocation: sourceLocation)
            (status, body) = (code, [String: String]())
        }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(body)
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        return Reply(status: status, body: object, text: String(decoding: data, as: UTF8.self))
    }

    /// Runs SQL on the server's database through a connection of the test's own (to break things on purpose).
    func withSideConnection(_ body: @Sendable (any DatabaseProvider) async throws -> Void) async throws {
        switch databaseConfiguration {
        case .sqlite(let path):
            let side = try await SQLiteDatabaseProvider(location: .file(path))
            do {
                try await body(side)
            } catch {
                try? await side.close()
                throw error
            }
            try await side.close()
        case .postgres(let url):
            let side = PostgresDatabaseProvider(configuration: try PostgresDatabaseProvider.configuration(url: url))
            let task = Task { await side.run() }
            defer { task.cancel() }
            try await body(side)
        case .sqliteInMemory:
            Issue.record("no side connection to an in-memory database")
        }
    }

    /// The account's current app receipt from the simulated device.
    func receipt(account: String) async throws -> String {
        var request = HTTPClientRequest(url: simulatorURL + "/device/accounts/\(account)/receipt")
        request.method = .GET
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 8 << 20)
        let text = String(buffer: bytes)
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        return try #require(object?["receiptData"] as? String, "\(response.status): \(text.prefix(500))")
    }
}

/// Ports published by servers' `onServerRunning`, awaited by the test that started them.
final class PortRegistry: Sendable {
    static let shared = PortRegistry()
    private let state = Mutex<[String: (outcome: Result<Int, any Error>?, waiters: [CheckedContinuation<Int, any Error>])]>([:])

    struct StoppedBeforeStarting: Error {}

    func publish(_ key: String, _ port: Int) { settle(key, .success(port)) }

    /// Fails the waiters of `key` (a server that stopped before it listened); a port published already stands.
    func fail(_ key: String, _ error: any Error) { settle(key, .failure(error)) }

    private func settle(_ key: String, _ outcome: Result<Int, any Error>) {
        let waiters = state.withLock { state -> [CheckedContinuation<Int, any Error>] in
            if state[key]?.outcome != nil { return [] }
            let waiters = state[key]?.waiters ?? []
            state[key] = (outcome, [])
            return waiters
        }
        for waiter in waiters { waiter.resume(with: outcome) }
    }

    func wait(_ key: String) async throws -> Int {
        defer { state.withLock { $0[key] = nil } }
        return try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<Int, any Error>? in
                if let outcome = state[key]?.outcome { return outcome }
                state[key, default: (nil, [])].waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}
