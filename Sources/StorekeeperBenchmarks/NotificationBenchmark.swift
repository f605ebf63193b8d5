import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import StorekeeperCore
import StorekeeperServer

/// App Store Server Notifications V2 through HTTP on loopback: verified, stored durably, answered, and applied
/// (subscriptions delivered to their users, state updated) by the server's notification processor.
///
/// The notifications are real ones from an in-process simulator: users subscribe with their order's
/// `appAccountToken` and renew month after month. Throughput counts a notification once it is applied, not when
/// it is answered; latency is the webhook's answer time.
public struct NotificationBenchmark: Sendable {
    public struct Options: Sendable {
        public var users: Int
        public var months: Int
        public var concurrency: Int
        /// A fixed arrival rate per second instead of a closed loop.
        public var rate: Int?
        public var database: ServerConfiguration.Database
        public var warmup: Int

        public init(users: Int, months: Int, concurrency: Int, rate: Int?, database: ServerConfiguration.Database, warmup: Int = 1_000) {
            self.users = users
            self.months = months
            self.concurrency = concurrency
            self.rate = rate
            self.database = database
            self.warmup = warmup
        }
    }

    public struct Result: Sendable, Codable {
        public var notifications: Int
        /// From the first measured post until every measured notification was applied.
        public var seconds: Double
        public var perSecond: Double
        public var p50Milliseconds: Double
        public var p90Milliseconds: Double
        public var p99Milliseconds: Double
        public var maxMilliseconds: Double
        public var processed: Int
        public var failures: Int
        /// CPU time of the whole process (server and load generator) per measured notification.
        public var cpuMillisecondsPerNotification: Double
        /// Share of the machine's time the hypervisor gave elsewhere during the measurement (Linux; 0 elsewhere).
        public var stealPercent: Double
    }

    let options: Options

    public init(options: Options) { self.options = options }

    public func run() async throws -> Result {
        var logger = Logger(label: "storekeeper.bench")
        logger.logLevel = .warning
        let secret = "bench-hs256-secret-0123456789abcdef0123"
        let adminKey = "bench-admin-key-0123456789"
        let product = "com.example.bench.monthly"
        let simulatorCatalog = try JSONDecoder().decode(
            SimulatorCatalog.self,
            from: Data(
                """
                {"bundleId": "com.example.bench", "appAppleId": 1234567890,
                 "storefronts": [{"code": "USA", "id": "143441", "currency": "USD"}],
                 "subscriptionGroups": [{"id": "30000001", "name": "Bench"}],
                 "products": [{"id": "\(product)", "kind": "autoRenewable", "price": 990, "groupId": "30000001",
                               "level": 1, "period": "P1M"}]}
                """.utf8
            )
        )
        let chain = try AppStoreSigningChain.generate(.init(name: "Benchmark"))
        // A fresh seed each run: notification UUIDs never repeat an earlier run's on a reused database.
        let store = try SimulatedAppStore(catalog: simulatorCatalog, signingChain: chain, seed: UInt64.random(in: 1...UInt64.max / 2), start: Date())
        let catalogFile = FileManager.default.temporaryDirectory.appendingPathComponent("bench-catalog-\(UUID().uuidString).json")
        try JSONEncoder().encode(
            Catalog(products: [CatalogProduct(id: product, kind: .autoRenewable, entitlement: "bench", subscriptionGroup: "30000001", level: 1)])
        ).write(to: catalogFile)
        defer { try? FileManager.default.removeItem(at: catalogFile) }

        let configuration = ServerConfiguration(
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
            auth: AuthConfiguration(jwtHS256Secret: secret, adminKeys: ["bench": adminKey]),
            lifecycle: LifecycleConfiguration(pollInterval: .milliseconds(20), catchUpInterval: nil, sweepInterval: nil, consumptionInterval: nil)
        )
        let ports = AsyncStream<Int>.makeStream()
        let app = try await StorekeeperServer.buildApplication(
            configuration: configuration,
            logger: logger,
            onServerRunning: { ports.continuation.yield($0) }
        )
        let group = ServiceGroup(services: [app], gracefulShutdownSignals: [], logger: logger)
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(
                connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(options.concurrency, 8))
            )
        )
        return try await withThrowingTaskGroup(of: Result?.self) { tasks in
            tasks.addTask {
                try await group.run()
                return nil
            }
            var iterator = ports.stream.makeAsyncIterator()
            let port = await iterator.next() ?? 0
            let base = "http://127.0.0.1:\(port)"

            // Users and their orders, then a subscription each renewing month after month.
            for user in 0..<options.users {
                var request = HTTPClientRequest(url: base + "/v1/orders")
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                request.headers.add(
                    name: "Authorization",
                    value: "Bearer " + UserTokenVerifier.hs256Token(subject: "bench-\(user)", secret: secret, lifetime: 86_400)
                )
                request.body = .bytes(ByteBuffer(string: #"{"productId":"\#(product)"}"#))
                let response = try await client.execute(request, timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 1 << 16)
                struct Order: Decodable { var appAccountToken: UUID }
                let order = try JSONDecoder().decode(Order.self, from: Data(body.readableBytesView))
                let account = try await store.createAccount().id
                _ = try await store.purchase(productId: product, account: account, appAccountToken: order.appAccountToken)
            }
            for _ in 0..<options.months { try await store.advance(by: 31 * 86_400) }
            // Webhook calls go through a lean keep-alive client so that the load generator's own CPU, on the same
            // two cores, stays small next to the server's.
            let requests = await store.sentNotifications().map {
                LoopbackHTTPClient.request(path: "/apple/notifications/v2", body: #"{"signedPayload":""# + $0.signedPayload + #""}"#)
            }
            let loopback = LoopbackHTTPClient(port: port)
            let warmup = min(options.warmup, requests.count / 10)
            @Sendable func post(_ index: Int) async -> (ok: Bool, nanoseconds: UInt64) {
                let started = DispatchTime.now().uptimeNanoseconds
                do {
                    let status = try await loopback.send(requests[index])
                    return (status == 200, DispatchTime.now().uptimeNanoseconds - started)
                } catch {
                    return (false, DispatchTime.now().uptimeNanoseconds - started)
                }
            }
            @Sendable func processed() async throws -> Int {
                var request = HTTPClientRequest(url: base + "/v1/admin/notifications/summary")
                request.headers.add(name: "X-Admin-Key", value: adminKey)
                let response = try await client.execute(request, timeout: .seconds(30))
                struct Summary: Decodable { var counts: [String: Int] }
                return try JSONDecoder().decode(Summary.self, from: Data((try await response.body.collect(upTo: 1 << 16)).readableBytesView))
                    .counts["processed"] ?? 0
            }
            // A reused database already holds earlier runs' notifications: count only this run's.
            let baseline = try await processed()
            _ = await PurchaseBenchmark.drive(range: 0..<warmup, concurrency: options.concurrency, rate: nil, post)
            while try await processed() - baseline < warmup { try await Task.sleep(for: .milliseconds(20)) }

            FileHandle.standardError.write(Data("bench-notifications: \(requests.count - warmup) notifications, measuring\n".utf8))
            let started = DispatchTime.now().uptimeNanoseconds
            let cpuBefore = CPUUsage.now()
            let samples = await PurchaseBenchmark.drive(
                range: warmup..<requests.count,
                concurrency: options.concurrency,
                rate: options.rate,
                post
            )
            var done = try await processed() - baseline
            let deadline = ContinuousClock.now + .seconds(300)
            while done < requests.count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
                done = try await processed() - baseline
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            let cpuAfter = CPUUsage.now()
            let latencies = samples.map(\.nanoseconds).sorted()
            func percentile(_ p: Double) -> Double {
                latencies.isEmpty ? 0 : Double(latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]) / 1e6
            }
            let measured = requests.count - warmup
            let result = Result(
                notifications: measured,
                seconds: seconds,
                perSecond: Double(measured) / seconds,
                p50Milliseconds: percentile(0.50),
                p90Milliseconds: percentile(0.90),
                p99Milliseconds: percentile(0.99),
                maxMilliseconds: Double(latencies.last ?? 0) / 1e6,
                processed: done - warmup,
                failures: samples.filter { !$0.ok }.count + (requests.count - done),
                cpuMillisecondsPerNotification: (cpuAfter.processSeconds - cpuBefore.processSeconds) * 1_000 / Double(max(measured, 1)),
                stealPercent: cpuAfter.stealPercent(since: cpuBefore)
            )
            await loopback.shutdown()
            try await client.shutdown()
            // Stopped as a service is, not cancelled: a cancelled server logs its connections' cancellation.
            await group.triggerGracefulShutdown()
            while try await tasks.next() != nil {}
            return result
        }
    }
}
