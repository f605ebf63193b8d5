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

/// Events delivered to a backend on loopback: how many per second the sender drains from a backlog, and how long an
/// event takes from its purchase being submitted to the backend receiving it while purchases arrive at a fixed rate.
///
/// The server and the backend (a Hummingbird app answering 204) run in this process on real sockets, so they share
/// the machine's cores with the load generator.
public struct WebhookBenchmark: Sendable {
    public struct Options: Sendable {
        /// Purchases queued while the endpoint is paused, then drained (throughput).
        public var backlog: Int
        /// Purchases submitted at `rate` per second with the endpoint running (latency).
        public var purchases: Int
        public var rate: Int
        public var concurrency: Int
        public var database: ServerConfiguration.Database

        public init(backlog: Int, purchases: Int, rate: Int, concurrency: Int, database: ServerConfiguration.Database) {
            self.backlog = backlog
            self.purchases = purchases
            self.rate = rate
            self.concurrency = concurrency
            self.database = database
        }
    }

    public struct Result: Sendable, Codable {
        /// Events in the drained backlog, and how long the drain took.
        public var backlogEvents: Int
        public var drainSeconds: Double
        public var eventsPerSecond: Double
        /// Purchases in the latency run and the rate they came at.
        public var purchases: Int
        public var rate: Int
        /// Submit-to-receipt of each purchase's `purchase.delivered` event (includes the submission's own HTTP call).
        public var p50Milliseconds: Double
        public var p99Milliseconds: Double
        public var maxMilliseconds: Double
        /// The same, from the submission's answer (the commit) to receipt; 0 when the event arrived first.
        public var answerToReceiptP50Milliseconds: Double
        public var answerToReceiptP99Milliseconds: Double
        public var lost: Int
    }

    let options: Options

    public init(options: Options) { self.options = options }

    /// What the backend saw: receipt time of each delivered purchase (by transaction id), and the count of events.
    final class Received: Sendable {
        let state = Mutex<(times: [String: UInt64], events: Int)>(([:], 0))
    }

    public func run() async throws -> Result {
        var logger = Logger(label: "storekeeper.bench")
        logger.logLevel = .warning
        let secret = "bench-hs256-secret-0123456789abcdef0123"
        let adminKey = "bench-admin-key-0123456789abcdef"
        let catalog = try JSONDecoder().decode(
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
        let store = try SimulatedAppStore(catalog: catalog, signingChain: chain, seed: 1, start: Date())
        var accounts: [String] = []
        for _ in 0..<200 { accounts.append(try await store.createAccount().id) }
        let total = options.backlog + options.purchases
        var made: [(id: String, jws: String)] = []
        made.reserveCapacity(total)
        for index in 0..<total {
            let purchase = try await store.purchase(productId: "com.example.bench.coins", account: accounts[index % accounts.count])
            made.append((purchase.transaction.transactionId ?? "", purchase.signedTransaction))
        }
        let signed = made
        let users = 1_000
        let tokens = (0..<users).map { UserTokenVerifier.hs256Token(subject: "bench-user-\($0)", secret: secret, lifetime: 86_400) }
        let catalogFile = FileManager.default.temporaryDirectory.appendingPathComponent("bench-catalog-\(UUID().uuidString).json")
        try JSONEncoder().encode(Catalog(products: [CatalogProduct(id: "com.example.bench.coins", kind: .consumable, coins: 10)]))
            .write(to: catalogFile)
        defer { try? FileManager.default.removeItem(at: catalogFile) }

        // The backend: records when each purchase's delivery event arrived.
        let received = Received()
        let router = Router()
        router.post("hook") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            let now = DispatchTime.now().uptimeNanoseconds
            let subject = Self.field("subject", in: body)
            let delivered = Self.field("type", in: body) == "purchase.delivered"
            received.state.withLock { state in
                state.events += 1
                if delivered, let subject, state.times[subject] == nil { state.times[subject] = now }
            }
            return Response(status: .noContent)
        }
        let backendPorts = AsyncStream<Int>.makeStream()
        let backend = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { backendPorts.continuation.yield($0.localAddress?.port ?? 0) },
            logger: logger
        )
        let backendGroup = ServiceGroup(services: [backend], gracefulShutdownSignals: [], logger: logger)
        return try await withThrowingTaskGroup(of: Result?.self) { tasks in
            tasks.addTask {
                try await backendGroup.run()
                return nil
            }
            var backendIterator = backendPorts.stream.makeAsyncIterator()
            let backendPort = await backendIterator.next() ?? 0
            var configuration = ServerConfiguration(
                port: 0,
                database: options.database,
                catalogFile: catalogFile.path,
                apps: [
                    AppConfiguration(
                        bundleId: catalog.bundleId,
                        appAppleId: catalog.appAppleId,
                        deployment: .development,
                        extraRootsPEM: [try chain.rootPEM()]
                    )
                ],
                auth: AuthConfiguration(jwtHS256Secret: secret, adminKeys: ["bench": adminKey])
            )
            configuration.webhooks = [
                WebhookConfiguration(
                    name: "backend",
                    url: URL(string: "http://127.0.0.1:\(backendPort)/hook")!,
                    secrets: [String(repeating: "k", count: 40)],
                    concurrency: options.concurrency
                )
            ]
            let ports = AsyncStream<Int>.makeStream()
            let app = try await StorekeeperServer.buildApplication(
                configuration: configuration,
                logger: logger,
                onServerRunning: { ports.continuation.yield($0) }
            )
            let group = ServiceGroup(services: [app], gracefulShutdownSignals: [], logger: logger)
            tasks.addTask {
                try await group.run()
                return nil
            }
            var iterator = ports.stream.makeAsyncIterator()
            let port = await iterator.next() ?? 0
            let base = "http://127.0.0.1:\(port)"
            let client = HTTPClient(
                eventLoopGroupProvider: .singleton,
                configuration: .init(connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64))
            )
            let bodies = signed.map { ByteBuffer(string: #"{"signedTransaction":""# + $0.jws + #""}"#) }
            let answered = Mutex<[String: UInt64]>([:])
            let submitted = Mutex<[String: UInt64]>([:])
            @Sendable func submit(_ index: Int) async -> (ok: Bool, nanoseconds: UInt64) {
                var request = HTTPClientRequest(url: base + "/v1/purchases")
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                request.headers.add(name: "Authorization", value: "Bearer " + tokens[index % tokens.count])
                request.body = .bytes(bodies[index])
                let started = DispatchTime.now().uptimeNanoseconds
                submitted.withLock { $0[signed[index].id] = started }
                do {
                    let response = try await client.execute(request, timeout: .seconds(30))
                    _ = try await response.body.collect(upTo: 1 << 16)
                    let now = DispatchTime.now().uptimeNanoseconds
                    answered.withLock { $0[signed[index].id] = now }
                    return (response.status == .ok, now - started)
                } catch {
                    return (false, DispatchTime.now().uptimeNanoseconds - started)
                }
            }
            func control(_ action: String) async throws {
                var request = HTTPClientRequest(url: base + "/v1/admin/webhooks/backend/\(action)")
                request.method = .POST
                request.headers.add(name: "X-Admin-Key", value: adminKey)
                let response = try await client.execute(request, timeout: .seconds(30))
                _ = try await response.body.collect(upTo: 1 << 16)
            }
            func waitForEvents(_ count: Int, deadline seconds: Double) async throws {
                let limit = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
                while received.state.withLock({ $0.events }) < count, DispatchTime.now().uptimeNanoseconds < limit {
                    try await Task.sleep(for: .milliseconds(5))
                }
            }

            // Throughput: a backlog built while paused, then drained.
            try await control("pause")
            _ = await PurchaseBenchmark.drive(range: 0..<options.backlog, concurrency: 64, rate: nil, submit)
            let backlogEvents = options.backlog
            try await Task.sleep(for: .seconds(1))
            let drainStart = DispatchTime.now().uptimeNanoseconds
            try await control("resume")
            try await waitForEvents(backlogEvents, deadline: 600)
            let drainSeconds = Double(DispatchTime.now().uptimeNanoseconds - drainStart) / 1e9
            let drained = received.state.withLock { $0.events }

            // Latency: purchases at a fixed rate with the endpoint running.
            _ = await PurchaseBenchmark.drive(range: options.backlog..<total, concurrency: 64, rate: options.rate, submit)
            try await waitForEvents(total, deadline: 120)
            let times = received.state.withLock { $0.times }
            var fromSubmit: [UInt64] = []
            var fromAnswer: [UInt64] = []
            var lost = 0
            let submits = submitted.withLock { $0 }
            let answers = answered.withLock { $0 }
            for item in signed[options.backlog..<total] {
                guard let arrived = times[item.id], let sent = submits[item.id] else {
                    lost += 1
                    continue
                }
                fromSubmit.append(arrived >= sent ? arrived - sent : 0)
                if let answer = answers[item.id] { fromAnswer.append(arrived >= answer ? arrived - answer : 0) }
            }
            fromSubmit.sort()
            fromAnswer.sort()
            func percentile(_ values: [UInt64], _ p: Double) -> Double {
                values.isEmpty ? 0 : Double(values[min(values.count - 1, Int(Double(values.count) * p))]) / 1e6
            }
            let result = Result(
                backlogEvents: drained,
                drainSeconds: drainSeconds,
                eventsPerSecond: Double(drained) / drainSeconds,
                purchases: options.purchases,
                rate: options.rate,
                p50Milliseconds: percentile(fromSubmit, 0.5),
                p99Milliseconds: percentile(fromSubmit, 0.99),
                maxMilliseconds: Double(fromSubmit.last ?? 0) / 1e6,
                answerToReceiptP50Milliseconds: percentile(fromAnswer, 0.5),
                answerToReceiptP99Milliseconds: percentile(fromAnswer, 0.99),
                lost: lost
            )
            try await client.shutdown()
            await group.triggerGracefulShutdown()
            await backendGroup.triggerGracefulShutdown()
            tasks.cancelAll()
            return result
        }
    }

    /// The string value of `"name":"…"` in a JSON body, read without parsing the whole body.
    static func field(_ name: String, in body: ByteBuffer) -> String? {
        let view = body.readableBytesView
        let needle = Array("\"\(name)\":\"".utf8)
        guard let start = view.firstRange(of: needle)?.upperBound else { return nil }
        guard let end = view[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return String(decoding: view[start..<end], as: UTF8.self)
    }
}
