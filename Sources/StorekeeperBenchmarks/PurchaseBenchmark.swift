import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import StorekeeperCore
import StorekeeperServer
import Synchronization

/// Purchase submission through HTTP on loopback: verify, deliver, durable commit, answer.
///
/// Signed transactions are made up front by an in-process simulator; the server runs in this process on a real
/// socket and the load generator (AsyncHTTPClient, keep-alive connections) calls it like any client would.
public struct PurchaseBenchmark: Sendable {
    public struct Options: Sendable {
        public var purchases: Int
        public var concurrency: Int
        /// Fixed arrival rate (per second) for a latency figure; `nil` runs closed-loop at full speed.
        public var rate: Int?
        public var database: ServerConfiguration.Database
        public var users: Int
        public var warmup: Int
        /// Production purchases spread over the past year, delivered before the warm-up: what a year's report reads.
        public var history: Int
        /// While measuring, a year's revenue report and the console overview's reads (30 days of revenue and
        /// subscription analytics) run in a loop through the admin API.
        public var readLoad: Bool
        /// SQLite's read-only connections (0: every read on the writer's connection).
        public var sqliteReaders: Int

        public init(
            purchases: Int,
            concurrency: Int,
            rate: Int?,
            database: ServerConfiguration.Database,
            users: Int = 1000,
            warmup: Int = 1000,
            history: Int = 0,
            readLoad: Bool = false,
            sqliteReaders: Int = 2
        ) {
            self.sqliteReaders = sqliteReaders
            self.purchases = purchases
            self.concurrency = concurrency
            self.rate = rate
            self.database = database
            self.users = users
            self.warmup = warmup
            self.history = history
            self.readLoad = readLoad
        }
    }

    public struct Result: Sendable, Codable {
        public var purchases: Int
        public var seconds: Double
        public var perSecond: Double
        public var p50Milliseconds: Double
        public var p90Milliseconds: Double
        public var p99Milliseconds: Double
        public var maxMilliseconds: Double
        public var delivered: Int
        public var failures: Int
        /// Report loops completed meanwhile (with `readLoad`): year reports, overview reads.
        public var yearReports: Int = 0
        public var overviews: Int = 0
    }

    let options: Options

    public init(options: Options) { self.options = options }

    public func run() async throws -> Result {
        var logger = Logger(label: "storekeeper.bench")
        logger.logLevel = .warning
        let secret = "bench-hs256-secret-0123456789abcdef0123"
        let simulatorCatalog = try JSONDecoder().decode(
            SimulatorCatalog.self,
            from: Data(
                """
                {"bundleId": "com.example.bench", "appAppleId": 1234567890,
                 "storefronts": [{"code": "USA", "id": "143441", "currency": "USD"}], "subscriptionGroups": [],
                 "products": [{"id": "com.example.bench.coins", "kind": "consumable", "price": 990}]}
                """.utf8
            )
        )
        let chain = try AppStoreSigningChain.generate(.init(name: "Benchmark"))
        let store = try SimulatedAppStore(catalog: simulatorCatalog, signingChain: chain, seed: 1, start: Date())
        var accounts: [String] = []
        for _ in 0..<min(options.users, 200) { accounts.append(try await store.createAccount().id) }
        let total = options.warmup + options.purchases
        var signed: [String] = []
        signed.reserveCapacity(total)
        for index in 0..<total {
            signed.append(try await store.purchase(productId: "com.example.bench.coins", account: accounts[index % accounts.count]).signedTransaction)
        }
        // A year of production purchases, one every 365 days / history apart.
        var history: [String] = []
        if options.history > 0 {
            let yearAgo = Date().addingTimeInterval(-365 * 86_400)
            let past = try SimulatedAppStore(catalog: simulatorCatalog, signingChain: chain, seed: 2, start: yearAgo, environment: .production)
            let buyer = try await past.createAccount().id
            let step = 365 * 86_400 / Double(options.history)
            for _ in 0..<options.history {
                history.append(try await past.purchase(productId: "com.example.bench.coins", account: buyer).signedTransaction)
                try await past.advance(by: step)
            }
        }
        let adminKey = "bench-admin-key-0123456789abcdef"
        let tokens = (0..<options.users).map {
            UserTokenVerifier.hs256Token(subject: "bench-user-\($0)", secret: secret, lifetime: 86_400)
        }
        let catalogFile = FileManager.default.temporaryDirectory.appendingPathComponent("bench-catalog-\(UUID().uuidString).json")
        try JSONEncoder().encode(Catalog(products: [CatalogProduct(id: "com.example.bench.coins", kind: .consumable, coins: 10)]))
            .write(to: catalogFile)
        defer { try? FileManager.default.removeItem(at: catalogFile) }

        var configuration = ServerConfiguration(
            port: 0,
            database: options.database,
            catalogFile: catalogFile.path,
            apps: [
                AppConfiguration(
                    bundleId: simulatorCatalog.bundleId,
                    appAppleId: simulatorCatalog.appAppleId,
                    deployment: .development,
                    extraRootsPEM: [try chain.rootPEM()]
                )
            ],
            auth: AuthConfiguration(jwtHS256Secret: secret, adminKeys: ["bench": adminKey])
        )
        configuration.sqliteReaders = options.sqliteReaders
        let ports = AsyncStream<Int>.makeStream()
        let app = try await StorekeeperServer.buildApplication(
            configuration: configuration,
            logger: logger,
            onServerRunning: { ports.continuation.yield($0) }
        )
        let group = ServiceGroup(services: [app], gracefulShutdownSignals: [], logger: logger)
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: options.concurrency))
        )
        return try await withThrowingTaskGroup(of: Result?.self) { tasks in
            tasks.addTask {
                try await group.run()
                return nil
            }
            var iterator = ports.stream.makeAsyncIterator()
            let port = await iterator.next() ?? 0
            let url = "http://127.0.0.1:\(port)/v1/purchases"
            let bodies = signed.map { ByteBuffer(string: #"{"signedTransaction":""# + $0 + #""}"#) }
            @Sendable func submit(_ index: Int) async -> (ok: Bool, nanoseconds: UInt64) {
                var request = HTTPClientRequest(url: url)
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                request.headers.add(name: "Authorization", value: "Bearer " + tokens[index % tokens.count])
                request.body = .bytes(bodies[index])
                let started = DispatchTime.now().uptimeNanoseconds
                do {
                    let response = try await client.execute(request, timeout: .seconds(30))
                    _ = try await response.body.collect(upTo: 1 << 16)
                    return (response.status == .ok, DispatchTime.now().uptimeNanoseconds - started)
                } catch {
                    return (false, DispatchTime.now().uptimeNanoseconds - started)
                }
            }
            if !history.isEmpty {
                let past = history.map { ByteBuffer(string: #"{"signedTransaction":""# + $0 + #""}"#) }
                @Sendable func deliverPast(_ index: Int) async -> (ok: Bool, nanoseconds: UInt64) {
                    var request = HTTPClientRequest(url: url)
                    request.method = .POST
                    request.headers.add(name: "Content-Type", value: "application/json")
                    request.headers.add(name: "Authorization", value: "Bearer " + tokens[index % tokens.count])
                    request.body = .bytes(past[index])
                    let response = try? await client.execute(request, timeout: .seconds(60))
                    _ = try? await response?.body.collect(upTo: 1 << 16)
                    return (response?.status == .ok, 0)
                }
                let delivered = await Self.drive(range: 0..<past.count, concurrency: options.concurrency, rate: nil, deliverPast)
                let refused = delivered.filter { !$0.ok }.count
                if refused > 0 { logger.warning("bench-purchases: \(refused) history purchases were not delivered") }
            }
            _ = await Self.drive(range: 0..<options.warmup, concurrency: options.concurrency, rate: nil, submit)
            // The readers: a year's revenue report, and the console overview's reads, each in a loop until the
            // measured purchases are done.
            let loops = ReadLoops()
            let readLogger = logger
            let base = "http://127.0.0.1:\(port)/v1/admin/reports/"
            let today = Date()
            let readPaths: [(String, Int)] =
                options.readLoad
                ? [
                    (
                        "revenue?from=\(RevenueReportBuilder.day(today.addingTimeInterval(-364 * 86_400)))&to=\(RevenueReportBuilder.day(today.addingTimeInterval(86_400)))",
                        0
                    ),
                    (
                        "revenue?from=\(RevenueReportBuilder.day(today.addingTimeInterval(-29 * 86_400)))&to=\(RevenueReportBuilder.day(today.addingTimeInterval(86_400)))",
                        1
                    ),
                    (
                        "subscriptions?from=\(RevenueReportBuilder.day(today.addingTimeInterval(-29 * 86_400)))&to=\(RevenueReportBuilder.day(today.addingTimeInterval(86_400)))",
                        1
                    ),
                ] : []
            let readers = Task {
                await withTaskGroup(of: Void.self) { readers in
                    for (path, counter) in readPaths {
                        readers.addTask {
                            while loops.measuring.load(ordering: .relaxed) {
                                var request = HTTPClientRequest(url: base + path)
                                request.headers.add(name: "X-Admin-Key", value: adminKey)
                                guard let response = try? await client.execute(request, timeout: .seconds(300)),
                                    (try? await response.body.collect(upTo: 256 << 20)) != nil, response.status == .ok
                                else {
                                    readLogger.warning("bench-purchases: a report read failed")
                                    try? await Task.sleep(for: .milliseconds(100))
                                    continue
                                }
                                if counter == 0 { loops.year.add(1, ordering: .relaxed) } else { loops.overview.add(1, ordering: .relaxed) }
                            }
                        }
                    }
                }
            }
            let started = DispatchTime.now().uptimeNanoseconds
            let samples = await Self.drive(
                range: options.warmup..<total,
                concurrency: options.concurrency,
                rate: options.rate,
                submit
            )
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            loops.measuring.store(false, ordering: .relaxed)
            await readers.value
            let latencies = samples.map(\.nanoseconds).sorted()
            func percentile(_ p: Double) -> Double {
                latencies.isEmpty ? 0 : Double(latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]) / 1e6
            }
            let failures = samples.filter { !$0.ok }.count
            let result = Result(
                purchases: options.purchases,
                seconds: seconds,
                perSecond: Double(options.purchases) / seconds,
                p50Milliseconds: percentile(0.50),
                p90Milliseconds: percentile(0.90),
                p99Milliseconds: percentile(0.99),
                maxMilliseconds: Double(latencies.last ?? 0) / 1e6,
                delivered: samples.count - failures,
                failures: failures,
                yearReports: loops.year.load(ordering: .relaxed),
                overviews: loops.overview.load(ordering: .relaxed) / 2
            )
            try await client.shutdown()
            // Stopped as a service is, not cancelled: a cancelled server logs its connections' cancellation.
            await group.triggerGracefulShutdown()
            while try await tasks.next() != nil {}
            return result
        }
    }

    /// Runs `submit` over `range`: closed loop with `concurrency` workers, or open loop at `rate` per second.
    public static func drive(
        range: Range<Int>,
        concurrency: Int,
        rate: Int?,
        _ submit: @escaping @Sendable (Int) async -> (ok: Bool, nanoseconds: UInt64)
    ) async -> [(ok: Bool, nanoseconds: UInt64)] {
        let next = SharedIndex(range.lowerBound)
        return await withTaskGroup(of: [(ok: Bool, nanoseconds: UInt64)].self) { group in
            if let rate {
                let start = ContinuousClock.now
                for index in range {
                    let due = start + .nanoseconds(Int64(index - range.lowerBound) * 1_000_000_000 / Int64(rate))
                    try? await Task.sleep(until: due, clock: .continuous)
                    group.addTask { [await submit(index)] }
                }
            } else {
                for _ in 0..<concurrency {
                    group.addTask {
                        var samples: [(ok: Bool, nanoseconds: UInt64)] = []
                        while true {
                            let index = next.value.add(1, ordering: .relaxed).oldValue
                            guard index < range.upperBound else { return samples }
                            samples.append(await submit(index))
                        }
                    }
                }
            }
            var all: [(ok: Bool, nanoseconds: UInt64)] = []
            for await part in group { all += part }
            return all
        }
    }
}

/// The report readers' switch and counts.
private final class ReadLoops: Sendable {
    let measuring = Atomic(true)
    let year = Atomic(0)
    let overview = Atomic(0)
}

/// The next work item, shared by the load generator's workers.
private final class SharedIndex: Sendable {
    let value: Atomic<Int>
    init(_ start: Int) { value = Atomic(start) }
}
