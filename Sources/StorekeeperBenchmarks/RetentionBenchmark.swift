import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import StorekeeperCore
import StorekeeperServer

/// Apple's realtime retention requests (Retention Messaging) through HTTP on loopback: each verified, the
/// subscriber's history read, a rule chosen, and — for half of them — a promotional offer signed with the app's key.
/// Apple allows 700 ms; Storekeeper's goal is 20 ms at p99.
///
/// The requests are real ones, signed by an in-process simulator about subscribers whose purchases were delivered
/// first (so the history reads find rows); English requests get a signed offer, German ones a message.
public struct RetentionBenchmark: Sendable {
    public struct Options: Sendable {
        public var subscribers: Int
        public var requests: Int
        public var concurrency: Int
        /// A fixed arrival rate per second instead of a closed loop.
        public var rate: Int?
        public var database: ServerConfiguration.Database

        public init(subscribers: Int, requests: Int, concurrency: Int, rate: Int?, database: ServerConfiguration.Database) {
            self.subscribers = subscribers
            self.requests = requests
            self.concurrency = concurrency
            self.rate = rate
            self.database = database
        }
    }

    public struct Result: Sendable, Codable {
        public var requests: Int
        public var seconds: Double
        public var perSecond: Double
        public var p50Milliseconds: Double
        public var p90Milliseconds: Double
        public var p99Milliseconds: Double
        public var maxMilliseconds: Double
        public var failures: Int
        public var cpuMillisecondsPerRequest: Double
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
                               "level": 1, "period": "P1M",
                               "promotionalOffers": [{"id": "stay-50", "discountType": "PAY_AS_YOU_GO", "period": "P1M", "price": 490}]}]}
                """.utf8
            )
        )
        let chain = try AppStoreSigningChain.generate(.init(name: "Benchmark"))
        let store = try SimulatedAppStore(catalog: simulatorCatalog, signingChain: chain, seed: UInt64.random(in: 1...UInt64.max / 2), start: Date())
        let catalogFile = FileManager.default.temporaryDirectory.appendingPathComponent("bench-catalog-\(UUID().uuidString).json")
        try JSONEncoder().encode(
            Catalog(
                products: [CatalogProduct(id: product, kind: .autoRenewable, entitlement: "bench", subscriptionGroup: "30000001", level: 1)],
                retention: [
                    RetentionRule(
                        id: "offer-en",
                        productIds: [product],
                        locales: ["en"],
                        when: .init(maximumRefunds: 0, offerNotRedeemedBefore: true),
                        answer: .promotionalOffer(messageId: UUID().uuidString.lowercased(), offerId: "stay-50")
                    ),
                    RetentionRule(id: "message", answer: .message(messageId: UUID().uuidString.lowercased())),
                ]
            )
        ).write(to: catalogFile)
        defer { try? FileManager.default.removeItem(at: catalogFile) }
        let key = P256.Signing.PrivateKey()

        let configuration = ServerConfiguration(
            port: 0,
            database: options.database,
            catalogFile: catalogFile.path,
            apps: [
                AppConfiguration(
                    bundleId: simulatorCatalog.bundleId,
                    appAppleId: simulatorCatalog.appAppleId,
                    deployment: .development,
                    extraRootsPEM: [try chain.rootPEM()],
                    apiKeyId: "BENCHKEY01",
                    apiIssuerId: UUID().uuidString.lowercased(),
                    apiKeyPEM: key.pemRepresentation,
                    // The signing key is all the benchmark needs; nothing calls this address.
                    serverAPIURL: URL(string: "http://127.0.0.1:9")!
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
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        return try await withThrowingTaskGroup(of: Result?.self) { tasks in
            tasks.addTask {
                try await group.run()
                return nil
            }
            var iterator = ports.stream.makeAsyncIterator()
            let port = await iterator.next() ?? 0
            let base = "http://127.0.0.1:\(port)"
            let loopback = LoopbackHTTPClient(port: port)

            // Subscribers, each subscription delivered to its user through the notification webhook.
            var originals: [String] = []
            for user in 0..<options.subscribers {
                var request = HTTPClientRequest(url: base + "/v1/orders")
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                request.headers.add(
                    name: "Authorization",
                    value: "Bearer " + UserTokenVerifier.hs256Token(subject: "bench-\(user)", secret: secret, lifetime: 86_400)
                )
                request.body = .bytes(ByteBuffer(string: #"{"productId":"\#(product)"}"#))
                let response = try await client.execute(request, timeout: .seconds(30))
                struct Order: Decodable { var appAccountToken: UUID }
                let order = try JSONDecoder().decode(Order.self, from: Data((try await response.body.collect(upTo: 1 << 16)).readableBytesView))
                let account = try await store.createAccount().id
                let bought = try await store.purchase(productId: product, account: account, appAccountToken: order.appAccountToken)
                originals.append(bought.transaction.originalTransactionId ?? "")
            }
            let notifications = await store.sentNotifications().map {
                LoopbackHTTPClient.request(path: "/apple/notifications/v2", body: #"{"signedPayload":""# + $0.signedPayload + #""}"#)
            }
            _ = await PurchaseBenchmark.drive(range: 0..<notifications.count, concurrency: 16, rate: nil) { index in
                ((try? await loopback.send(notifications[index])) == 200, 0)
            }
            // Wait until every subscription is delivered (the processor applies what the webhook stored).
            var applied = 0
            let deadline = ContinuousClock.now + .seconds(120)
            while applied < notifications.count, ContinuousClock.now < deadline {
                var request = HTTPClientRequest(url: base + "/v1/admin/notifications/summary")
                request.headers.add(name: "X-Admin-Key", value: adminKey)
                let response = try await client.execute(request, timeout: .seconds(30))
                struct Summary: Decodable { var counts: [String: Int] }
                applied =
                    try JSONDecoder().decode(Summary.self, from: Data((try await response.body.collect(upTo: 1 << 16)).readableBytesView))
                    .counts["processed"] ?? 0
                if applied < notifications.count { try await Task.sleep(for: .milliseconds(20)) }
            }

            // The requests, signed ahead of time as Apple would send them: half English (a signed offer), half German.
            var signedRequests: [ByteBuffer] = []
            for index in 0..<options.requests {
                let signed = try await store.realtimeRetentionRequest(
                    originalTransactionId: originals[index % originals.count],
                    locale: index % 2 == 0 ? "en-US" : "de-DE",
                    url: "unused"
                )
                signedRequests.append(LoopbackHTTPClient.request(path: "/apple/retention", body: String(decoding: signed.body, as: UTF8.self)))
            }
            let requests = signedRequests
            @Sendable func post(_ index: Int) async -> (ok: Bool, nanoseconds: UInt64) {
                let started = DispatchTime.now().uptimeNanoseconds
                let status = try? await loopback.send(requests[index])
                return (status == 200, DispatchTime.now().uptimeNanoseconds - started)
            }
            let warmup = min(500, requests.count / 10)
            _ = await PurchaseBenchmark.drive(range: 0..<warmup, concurrency: options.concurrency, rate: nil, post)
            FileHandle.standardError.write(Data("bench-retention: \(requests.count - warmup) requests, measuring\n".utf8))
            let started = DispatchTime.now().uptimeNanoseconds
            let cpuBefore = CPUUsage.now()
            let samples = await PurchaseBenchmark.drive(range: warmup..<requests.count, concurrency: options.concurrency, rate: options.rate, post)
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            let cpuAfter = CPUUsage.now()
            let latencies = samples.map(\.nanoseconds).sorted()
            func percentile(_ p: Double) -> Double {
                latencies.isEmpty ? 0 : Double(latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]) / 1e6
            }
            let measured = requests.count - warmup
            let result = Result(
                requests: measured,
                seconds: seconds,
                perSecond: Double(measured) / seconds,
                p50Milliseconds: percentile(0.50),
                p90Milliseconds: percentile(0.90),
                p99Milliseconds: percentile(0.99),
                maxMilliseconds: Double(latencies.last ?? 0) / 1e6,
                failures: samples.filter { !$0.ok }.count + (applied < notifications.count ? notifications.count - applied : 0),
                cpuMillisecondsPerRequest: (cpuAfter.processSeconds - cpuBefore.processSeconds) * 1_000 / Double(max(measured, 1)),
                stealPercent: cpuAfter.stealPercent(since: cpuBefore)
            )
            await loopback.shutdown()
            try await client.shutdown()
            await group.triggerGracefulShutdown()
            tasks.cancelAll()
            return result
        }
    }
}
