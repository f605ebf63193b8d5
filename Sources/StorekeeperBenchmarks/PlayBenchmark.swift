import AsyncHTTPClient
import Foundation
import GooglePlaySimulator
import GooglePlayWire
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import StorekeeperCore
import StorekeeperServer

/// Google Play through HTTP on loopback, with the Play simulator in the same process on a real socket:
///
/// - purchases: `POST /v1/purchases {store: googlePlay, …}` for fresh purchase tokens — each one asks the Play
///   Developer API (`products.get`), delivers with a durable commit, consumes the purchase (`products.consume`)
///   after the commit, and answers;
/// - notifications: the same purchases' real-time developer notifications, pushed as Pub/Sub does (each with its
///   signed OIDC token, verified by the server against the simulator's published keys), stored, confirmed with
///   `products.get` and applied by the processor; throughput counts a notification once it is applied.
///
/// - reconciliation: once the simulator's clock has left the month, the month's Google Play sales reconciled against
///   the simulator's earnings report (every purchase's charge and fee lines, zipped, downloaded through its Cloud
///   Storage API), order by order.
///
/// The simulator's work (its API, OAuth, signing) runs on the same cores: the figures are the pair's, as a one-machine
/// deployment against a local Google would see them. The simulator's ground truth is checked afterwards: every
/// purchase consumed once, every notification applied.
public struct PlayBenchmark: Sendable {
    public struct Options: Sendable {
        public var purchases: Int
        public var concurrency: Int
        public var database: ServerConfiguration.Database
        public var warmup: Int
        public var users: Int

        public init(purchases: Int, concurrency: Int, database: ServerConfiguration.Database, warmup: Int = 500, users: Int = 1_000) {
            self.purchases = purchases
            self.concurrency = concurrency
            self.database = database
            self.warmup = warmup
            self.users = users
        }
    }

    public struct Result: Sendable, Codable {
        public var purchases: Int
        public var purchaseSeconds: Double
        public var purchasesPerSecond: Double
        public var purchaseP50Milliseconds: Double
        public var purchaseP99Milliseconds: Double
        public var cpuMillisecondsPerPurchase: Double
        /// Purchases the simulator says were consumed (every submitted one, warm-up included, once).
        public var consumed: Int
        public var notifications: Int
        /// From the first measured push until every measured notification was applied.
        public var notificationSeconds: Double
        public var notificationsPerSecond: Double
        public var pushP50Milliseconds: Double
        public var pushP99Milliseconds: Double
        public var cpuMillisecondsPerNotification: Double
        /// The month reconciled against the earnings report: the orders Google charged, how long it took, what it found
        /// (0 expected: every order was delivered).
        public var reconciledOrders: Int
        public var reconcileSeconds: Double
        public var reconcileFindings: Int
        public var failures: Int
    }

    let options: Options

    public init(options: Options) { self.options = options }

    public func run() async throws -> Result {
        var logger = Logger(label: "storekeeper.bench")
        logger.logLevel = .warning
        let secret = "bench-hs256-secret-0123456789abcdef0123"
        let adminKey = "bench-admin-key-0123456789abcdef"
        let pushAccount = "bench-push@storekeeper-bench.iam.gserviceaccount.com"
        let audience = "https://storekeeper.bench/google/rtdn"
        let play = try SimulatedPlayStore(catalog: .sample, now: Date())
        let package = PlayCatalog.sample.packageName
        // Queued from the first purchase on; the endpoint is the load generator's business.
        await play.configurePush(.init(endpoint: "unused", audience: audience, serviceAccountEmail: pushAccount))
        let total = options.warmup + options.purchases
        var phones: [String] = []
        for _ in 0..<min(options.users, 200) { phones.append(await play.createAccount().id) }
        var tokens: [String] = []
        tokens.reserveCapacity(total)
        for index in 0..<total {
            tokens.append(try await play.buy(productId: "coins_100", account: phones[index % phones.count]).token)
        }

        let playPorts = AsyncStream<Int>.makeStream()
        let simulator = Application(
            router: PlaySimulatorServer.buildRouter(store: play),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { playPorts.continuation.yield($0.localAddress?.port ?? 0) },
            logger: logger
        )
        let simulatorGroup = ServiceGroup(services: [simulator], gracefulShutdownSignals: [], logger: logger)
        return try await withThrowingTaskGroup(of: Result?.self) { outer in
            outer.addTask {
                try await simulatorGroup.run()
                return nil
            }
            var playIterator = playPorts.stream.makeAsyncIterator()
            let playURL = "http://127.0.0.1:\(await playIterator.next() ?? 0)"
            let key = try await play.issueServiceAccount(email: "bench@storekeeper-bench.iam.gserviceaccount.com", tokenURI: playURL + "/token")
            let catalogFile = FileManager.default.temporaryDirectory.appendingPathComponent("bench-play-catalog-\(UUID().uuidString).json")
            try JSONEncoder().encode(Catalog(products: [CatalogProduct(id: "coins_100", kind: .consumable, coins: 100, store: .googlePlay)]))
                .write(to: catalogFile)
            defer { try? FileManager.default.removeItem(at: catalogFile) }
            var app = AppConfiguration(bundleId: "com.example.bench", appAppleId: 1_234_567_890, deployment: .development)
            app.googlePlay = GooglePlayConfiguration(
                packageName: package,
                serviceAccountJSON: String(decoding: key.json(), as: UTF8.self),
                apiURL: URL(string: playURL)!,
                pushAudience: audience,
                pushServiceAccount: pushAccount,
                certsURL: URL(string: playURL + "/oauth2/v1/certs")!,
                reportsBucket: SimulatedPlayStore.reportsBucket,
                reportsURL: URL(string: playURL)!
            )
            var configuration = ServerConfiguration(
                port: 0,
                database: options.database,
                catalogFile: catalogFile.path,
                apps: [app],
                auth: AuthConfiguration(jwtHS256Secret: secret, adminKeys: ["bench": adminKey]),
                lifecycle: LifecycleConfiguration(pollInterval: .milliseconds(20), catchUpInterval: nil, sweepInterval: nil, consumptionInterval: nil)
            )
            configuration.lifecycle.playCatchUpInterval = nil
            configuration.lifecycle.playReconcileInterval = nil
            let ports = AsyncStream<Int>.makeStream()
            let server = try await StorekeeperServer.buildApplication(
                configuration: configuration,
                logger: logger,
                onServerRunning: { ports.continuation.yield($0) }
            )
            let group = ServiceGroup(services: [server], gracefulShutdownSignals: [], logger: logger)
            let client = HTTPClient(
                eventLoopGroupProvider: .singleton,
                configuration: .init(
                    connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(options.concurrency, 8))
                )
            )
            let result = try await withThrowingTaskGroup(of: Result?.self) { tasks in
                tasks.addTask {
                    try await group.run()
                    return nil
                }
                var iterator = ports.stream.makeAsyncIterator()
                let port = await iterator.next() ?? 0
                let base = "http://127.0.0.1:\(port)"
                let loopback = LoopbackHTTPClient(port: port)
                let users = (0..<options.users).map {
                    "Bearer " + UserTokenVerifier.hs256Token(subject: "bench-user-\($0)", secret: secret, lifetime: 86_400)
                }
                let purchases = tokens.enumerated().map { index, token in
                    LoopbackHTTPClient.request(
                        path: "/v1/purchases",
                        headers: [("Authorization", users[index % users.count])],
                        body: #"{"store":"googlePlay","packageName":"\#(package)","productId":"coins_100","purchaseToken":"\#(token)"}"#
                    )
                }
                @Sendable func send(_ requests: [ByteBuffer], _ index: Int) async -> (ok: Bool, nanoseconds: UInt64) {
                    let started = DispatchTime.now().uptimeNanoseconds
                    do {
                        let status = try await loopback.send(requests[index])
                        return (status == 200, DispatchTime.now().uptimeNanoseconds - started)
                    } catch {
                        return (false, DispatchTime.now().uptimeNanoseconds - started)
                    }
                }
                func percentile(_ samples: [(ok: Bool, nanoseconds: UInt64)], _ p: Double) -> Double {
                    let sorted = samples.map(\.nanoseconds).sorted()
                    return sorted.isEmpty ? 0 : Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1e6
                }

                // Purchases.
                _ = await PurchaseBenchmark.drive(range: 0..<options.warmup, concurrency: options.concurrency, rate: nil) {
                    await send(purchases, $0)
                }
                FileHandle.standardError.write(Data("bench-play: \(options.purchases) purchases, measuring\n".utf8))
                var cpu = CPUUsage.now()
                var started = DispatchTime.now().uptimeNanoseconds
                let purchaseSamples = await PurchaseBenchmark.drive(range: options.warmup..<total, concurrency: options.concurrency, rate: nil) {
                    await send(purchases, $0)
                }
                let purchaseSeconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
                let purchaseCPU = CPUUsage.now().processSeconds - cpu.processSeconds
                var consumed = 0
                for token in tokens where await play.purchase(token)?.consumed == true { consumed += 1 }

                // Notifications: the same purchases' pushes, each with its own token (signed before measuring).
                let pushes = try await play.duePushes().map { push in
                    LoopbackHTTPClient.request(
                        path: "/google/rtdn",
                        headers: [("Authorization", "Bearer \(push.bearer)")],
                        body: String(decoding: push.body, as: UTF8.self)
                    )
                }
                @Sendable func processed() async throws -> Int {
                    var request = HTTPClientRequest(url: base + "/v1/admin/notifications/summary")
                    request.headers.add(name: "X-Admin-Key", value: adminKey)
                    let response = try await client.execute(request, timeout: .seconds(30))
                    struct Summary: Decodable { var counts: [String: Int] }
                    return try JSONDecoder().decode(Summary.self, from: Data((try await response.body.collect(upTo: 1 << 16)).readableBytesView))
                        .counts["processed"] ?? 0
                }
                let warmup = min(options.warmup, pushes.count / 10)
                _ = await PurchaseBenchmark.drive(range: 0..<warmup, concurrency: options.concurrency, rate: nil) { await send(pushes, $0) }
                while try await processed() < warmup { try await Task.sleep(for: .milliseconds(20)) }
                FileHandle.standardError.write(Data("bench-play: \(pushes.count - warmup) notifications, measuring\n".utf8))
                cpu = CPUUsage.now()
                started = DispatchTime.now().uptimeNanoseconds
                let pushSamples = await PurchaseBenchmark.drive(range: warmup..<pushes.count, concurrency: options.concurrency, rate: nil) {
                    await send(pushes, $0)
                }
                var done = try await processed()
                let deadline = ContinuousClock.now + .seconds(600)
                while done < pushes.count, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(5))
                    done = try await processed()
                }
                let notificationSeconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
                let notificationCPU = CPUUsage.now().processSeconds - cpu.processSeconds
                let measuredPushes = pushes.count - warmup

                // The month is over on Google's clock: its earnings report is published; reconcile it.
                let now = await play.now
                var utc = Calendar(identifier: .gregorian)
                utc.timeZone = TimeZone(secondsFromGMT: 0)!
                let month = utc.dateInterval(of: .month, for: now)!
                await play.advance(by: month.end.timeIntervalSince(now) + 3_600)
                let monthName = String(format: "%04d-%02d", utc.component(.year, from: now), utc.component(.month, from: now))
                var reconcile = HTTPClientRequest(url: base + "/v1/admin/reconciliation/google-play/\(monthName)/run")
                reconcile.method = .POST
                reconcile.headers.add(name: "X-Admin-Key", value: adminKey)
                started = DispatchTime.now().uptimeNanoseconds
                let reconciled = try await client.execute(reconcile, timeout: .seconds(600))
                let reconcileBody = try await reconciled.body.collect(upTo: 64 << 20)
                let reconcileSeconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
                struct Reconciled: Decodable {
                    struct Day: Decodable {
                        var status: String
                        var appleUnits: Int
                        var findings: Int
                    }
                    var days: [Day]
                }
                let day = try JSONDecoder().decode(Reconciled.self, from: Data(reconcileBody.readableBytesView)).days.first
                await loopback.shutdown()
                try await client.shutdown()
                // Stopped as a service is, not cancelled: a cancelled server logs its connections' cancellation.
                await group.triggerGracefulShutdown()
                while try await tasks.next() != nil {}
                return Result(
                    purchases: options.purchases,
                    purchaseSeconds: purchaseSeconds,
                    purchasesPerSecond: Double(options.purchases) / purchaseSeconds,
                    purchaseP50Milliseconds: percentile(purchaseSamples, 0.5),
                    purchaseP99Milliseconds: percentile(purchaseSamples, 0.99),
                    cpuMillisecondsPerPurchase: purchaseCPU * 1_000 / Double(max(options.purchases, 1)),
                    consumed: consumed,
                    notifications: measuredPushes,
                    notificationSeconds: notificationSeconds,
                    notificationsPerSecond: Double(measuredPushes) / notificationSeconds,
                    pushP50Milliseconds: percentile(pushSamples, 0.5),
                    pushP99Milliseconds: percentile(pushSamples, 0.99),
                    cpuMillisecondsPerNotification: notificationCPU * 1_000 / Double(max(measuredPushes, 1)),
                    reconciledOrders: day?.appleUnits ?? 0,
                    reconcileSeconds: reconcileSeconds,
                    reconcileFindings: day?.findings ?? -1,
                    failures: purchaseSamples.filter { !$0.ok }.count + pushSamples.filter { !$0.ok }.count + (total - consumed)
                        + (pushes.count - done) + (day?.status == "reconciled" && day?.appleUnits == total ? 0 : 1)
                )
            }
            await simulatorGroup.triggerGracefulShutdown()
            while try await outer.next() != nil {}
            return result
        }
    }
}
