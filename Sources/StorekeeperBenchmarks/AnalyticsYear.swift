import AppStoreSimulator
import AppStoreWire
import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
import ServiceLifecycle
import StorekeeperCore
import StorekeeperServer

/// A simulated year of subscribers on the sample catalog's membership plans, fed through a running server: each
/// subscriber orders and buys on the App Store simulator, and every renewal, billing failure, grace period, expiry,
/// refund and upgrade reaches the server as a signed notification, applied as of the simulator's clock. The
/// analytics benchmark holds the server's charts against the simulator after it; `storekeeper demo
/// --analytics-subscribers` seeds its database with it so the Analytics page has a year to show.
public struct AnalyticsYear: Sendable {
    public var subscribers: Int
    public var days: Int
    public var seed: UInt64

    public init(subscribers: Int, days: Int = 365, seed: UInt64) {
        self.subscribers = subscribers
        self.days = days
        self.seed = seed
    }

    /// What one subscriber does, decided by a seeded generator so a run reproduces.
    struct Plan {
        var user: String
        var storefront: String
        var product: String
        var joinDay: Int
        var cancelDay: Int?
        var resubscribeDay: Int?
        var failDay: Int?
        var recoverDay: Int?
        var refundDay: Int?
        var upgradeDay: Int?

        var actionDays: [Int] { [cancelDay, resubscribeDay, failDay, recoverDay, refundDay, upgradeDay].compactMap { $0 } }
    }

    static let monthlyTrial = "com.example.storekeeper.membership.monthly"
    static let monthly = "com.example.storekeeper.membership.monthly.standard"
    static let yearly = "com.example.storekeeper.membership.yearly"

    /// Subscribers join over the first half of the range (half on the monthly plan with a free week, three in ten on
    /// the one without, two in ten yearly; a third in China, paying CNY); three in ten cancel (half of them come
    /// back), two in ten stop paying (a third recover within grace, a third in billing retry, the rest never), one in
    /// ten is refunded, one in ten on a monthly plan upgrades to the yearly one.
    func plans() -> [Plan] {
        var rng = SeededGenerator(seed: seed)
        let joining = max(1, days / 2)
        return (0..<subscribers).map { index in
            let product =
                switch rng.next() % 10 {
                case 0...4: Self.monthlyTrial
                case 5...7: Self.monthly
                default: Self.yearly
                }
            var plan = Plan(
                user: "analytics-\(index)",
                storefront: rng.next() % 3 == 0 ? "CHN" : "USA",
                product: product,
                joinDay: Int(rng.next() % UInt64(joining))
            )
            switch rng.next() % 10 {
            case 0...2:
                let cancel = plan.joinDay + 3 + Int(rng.next() % 120)
                plan.cancelDay = cancel
                if rng.next() % 2 == 0 { plan.resubscribeDay = cancel + 40 + Int(rng.next() % 60) }
            case 3...4:
                let fail = plan.joinDay + 20 + Int(rng.next() % 100)
                plan.failDay = fail
                switch rng.next() % 3 {
                case 0: plan.recoverDay = fail + 40 + Int(rng.next() % 6)
                case 1: plan.recoverDay = fail + 50 + Int(rng.next() % 40)
                default: break
                }
            case 5: plan.refundDay = plan.joinDay + 10 + Int(rng.next() % 150)
            case 6 where product != Self.yearly: plan.upgradeDay = plan.joinDay + 10 + Int(rng.next() % 100)
            default: break
            }
            return plan
        }
    }

    public struct Fed: Sendable {
        public var notifications: Int
        public var seconds: Double
    }

    /// Plays the year on `store` (whose clock it moves a day at a time) against the server behind `http`; `progress`
    /// hears each day's end with the notifications sent so far.
    func feed(
        store: SimulatedAppStore,
        http: BenchHTTP,
        userSecret: String,
        progress: (_ day: Int, _ notifications: Int) -> Void
    ) async throws -> Fed {
        let plans = plans()
        let joining = Dictionary(grouping: plans.indices, by: { plans[$0].joinDay })
        var acting: [Int: [Int]] = [:]
        for index in plans.indices { for day in Set(plans[index].actionDays) { acting[day, default: []].append(index) } }
        let delivery = NotificationDeliveryService(store: store, url: http.base + "/apple/notifications/v2", httpClient: http.client)
        var accounts: [Int: (account: String, token: UUID, original: String)] = [:]
        var notifications = 0
        let started = ContinuousClock.now
        for day in 0..<days {
            for index in joining[day] ?? [] {
                let plan = plans[index]
                let account = try await store.createAccount(storefront: plan.storefront).id
                let token = try await http.order(product: plan.product, user: plan.user, secret: userSecret)
                let bought = try await store.purchase(productId: plan.product, account: account, options: PurchaseOptions(appAccountToken: token))
                accounts[index] = (account, token, bought.transaction.originalTransactionId ?? "")
            }
            for index in acting[day] ?? [] {
                let plan = plans[index]
                guard let (account, token, original) = accounts[index] else { continue }
                // Actions the simulator refuses (cancelling what already ended, say) are simply not taken, as in life.
                if plan.cancelDay == day { try? await store.setAutoRenew(false, originalTransactionId: original) }
                if plan.resubscribeDay == day {
                    _ = try? await store.purchase(productId: plan.product, account: account, options: PurchaseOptions(appAccountToken: token))
                }
                if plan.failDay == day { try await store.setBillingFails(true, account: account) }
                if plan.recoverDay == day { try await store.setBillingFails(false, account: account) }
                if plan.refundDay == day, let latest = await store.transactions(account: account).last?.transactionId {
                    try? await store.decideRefund(transactionId: latest, approve: true)
                }
                if plan.upgradeDay == day {
                    _ = try? await store.purchase(productId: Self.yearly, account: account, options: PurchaseOptions(appAccountToken: token))
                }
            }
            notifications += try await deliver(delivery, store: store, http: http)
            try await store.advance(by: 86_400)
            progress(day, notifications)
        }
        notifications += try await deliver(delivery, store: store, http: http)
        return Fed(notifications: notifications, seconds: (ContinuousClock.now - started).seconds)
    }

    /// Sends what the simulator has due and applies it as of the simulator's clock; returns how many were sent.
    func deliver(_ delivery: NotificationDeliveryService, store: SimulatedAppStore, http: BenchHTTP) async throws -> Int {
        var sent = 0
        while true {
            let round = await delivery.deliverDue()
            sent += round
            if round == 0 { break }
        }
        // Until the processor has nothing left (bounded: a notification it cannot apply waits for its retry).
        if sent > 0 {
            var rounds = 0
            while rounds < 100, try await http.runJob("process-notifications", now: await store.currentDate) > 0 { rounds += 1 }
        }
        return sent
    }

    /// Seeds the database of `configuration` (its app trusting `store`'s chain): runs the server on a free loopback
    /// port with its periodic jobs off, plays the year, keeps `exchangeRates` (currency → millionths of the reporting
    /// currency, from the year's first day) so the charts can convert, brings the analytics up to date, and stops the
    /// server.
    public func seed(
        store: SimulatedAppStore,
        configuration: ServerConfiguration,
        adminKey: String,
        exchangeRates: [String: Int64] = [:],
        logger: Logger,
        progress: @escaping @Sendable (_ day: Int, _ notifications: Int) -> Void
    ) async throws -> Fed {
        var configuration = configuration
        configuration.port = 0
        configuration.lifecycle.catchUpInterval = nil
        configuration.lifecycle.sweepInterval = nil
        configuration.lifecycle.consumptionInterval = nil
        configuration.lifecycle.metricsInterval = nil
        configuration.lifecycle.accountTokenInterval = nil
        configuration.lifecycle.appTransactionInterval = nil
        configuration.reports?.reconcileInterval = nil
        // Google Play's simulator is not running yet: no monthly earnings reports to fetch from it.
        for index in configuration.apps.indices { configuration.apps[index].googlePlay?.reportsBucket = nil }
        let secret = configuration.auth.jwtHS256Secret ?? ""
        // A request line per call would bury the progress: the seeding server logs only what went wrong.
        var logger = logger
        logger.logLevel = max(logger.logLevel, .warning)
        return try await TemporaryServer.run(configuration: configuration, logger: logger) { client, base in
            let http = BenchHTTP(client: client, base: base, adminKey: adminKey)
            let first = RevenueReportBuilder.day(await store.currentDate)
            if !exchangeRates.isEmpty {
                let rates = exchangeRates.sorted { $0.key < $1.key }.map { #"{"day":"\#(first)","currency":"\#($0.key)","micros":\#($0.value)}"# }
                _ = try await http.send(
                    .PUT,
                    "/v1/admin/analytics/exchange-rates",
                    json: #"{"rates":[\#(rates.joined(separator: ","))]}"#,
                    headers: [("X-Admin-Key", adminKey)]
                )
            }
            let fed = try await feed(store: store, http: http, userSecret: secret, progress: progress)
            var batches = 0
            while batches < 100_000, try await http.runJob("analytics-rollup", now: await store.currentDate) > 0 { batches += 1 }
            return fed
        }
    }
}

/// A Storekeeper server on a free loopback port for the length of `body`, stopped gracefully after it.
enum TemporaryServer {
    static func run<Value: Sendable>(
        configuration: ServerConfiguration,
        logger: Logger,
        _ body: @Sendable (HTTPClient, String) async throws -> Value
    ) async throws -> Value {
        let ports = AsyncStream<Int>.makeStream()
        let app = try await StorekeeperServer.buildApplication(
            configuration: configuration,
            logger: logger,
            onServerRunning: { ports.continuation.yield($0) }
        )
        let group = ServiceGroup(services: [app], gracefulShutdownSignals: [], logger: logger)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        return try await withThrowingTaskGroup(of: Value?.self) { tasks in
            tasks.addTask {
                try await group.run()
                return nil
            }
            var iterator = ports.stream.makeAsyncIterator()
            let port = await iterator.next() ?? 0
            let result: Result<Value, any Error>
            do {
                result = .success(try await body(client, "http://127.0.0.1:\(port)"))
            } catch {
                result = .failure(error)
            }
            try await client.shutdown()
            // A graceful stop, awaited: cancelling the server's task instead logs errors from its closing channels.
            await group.triggerGracefulShutdown()
            while try await tasks.next() != nil {}
            return try result.get()
        }
    }
}
