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

/// A simulated year of subscribers held against the simulator's own figures: every subscriber's purchase goes
/// through an order and the App Store simulator, every renewal, billing failure, grace period, expiry, refund and
/// upgrade reaches the server as a signed notification over loopback HTTP, and at the end every day of every
/// analytics chart (counts, and money per currency) and every cohort's retention must equal what the simulator
/// computes from its own transactions (`SimulatedAppStore.analyticsTruth`), a different method from the server's
/// rollups. Reports how long the year took to feed, how long the rollups took to catch up, and how long the charts
/// took to answer.
public struct AnalyticsBenchmark: Sendable {
    public struct Options: Sendable {
        public var subscribers: Int
        public var days: Int
        public var seed: UInt64
        public var database: ServerConfiguration.Database
        /// The server's catalog and the simulator's (JSON): the sample catalogs, whose membership group has a monthly
        /// plan with a free trial, one without, and a yearly plan, sold in the USA (USD) and China (CNY).
        public var storekeeperCatalog: Data
        public var simulatorCatalog: Data

        public init(
            subscribers: Int,
            days: Int = 365,
            seed: UInt64,
            database: ServerConfiguration.Database,
            storekeeperCatalog: Data,
            simulatorCatalog: Data
        ) {
            self.subscribers = subscribers
            self.days = days
            self.seed = seed
            self.database = database
            self.storekeeperCatalog = storekeeperCatalog
            self.simulatorCatalog = simulatorCatalog
        }
    }

    public struct Result: Sendable, Codable {
        public var subscribers: Int
        public var days: Int
        public var notifications: Int
        /// Chart points compared (one per day per series) and those that differ.
        public var pointsCompared: Int
        public var pointMismatches: Int
        /// Cohort figures compared (size, and subscribed at each age) and those that differ.
        public var cohortFiguresCompared: Int
        public var cohortMismatches: Int
        /// The first differences, for a failure's report.
        public var firstMismatches: [String]
        /// The year's totals per metric as the simulator counts them (money keyed `metric|CURRENCY`, milliunits).
        public var totals: [String: Int64]
        public var feedSeconds: Double
        public var catchUpSeconds: Double
        public var chartRequests: Int
        public var chartMillisecondsMean: Double
        public var chartMillisecondsMax: Double
        /// The charts against Apple's Subscription Event report, by README's documented differences.
        public var eventReport: [EventAgreement]
    }

    let options: Options

    public init(options: Options) { self.options = options }

    public func run() async throws -> Result {
        var logger = Logger(label: "storekeeper.bench")
        logger.logLevel = .warning
        let secret = "bench-hs256-secret-0123456789abcdef0123"
        let adminKey = "bench-admin-key-0123456789"
        let simulatorCatalog = try JSONDecoder().decode(SimulatorCatalog.self, from: options.simulatorCatalog)
        let chain = try AppStoreSigningChain.generate(.init(name: "Analytics benchmark"))
        let store = try SimulatedAppStore(
            catalog: simulatorCatalog,
            signingChain: chain,
            seed: options.seed,
            // Noon UTC yesterday: every event then falls at noon UTC some whole days later, on the same date in UTC
            // (the charts' days) and in Pacific Time (the days of Apple's reports), so the two compare day by day.
            start: Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 86_400).rounded(.down) * 86_400 - 43_200),
            environment: .production
        )
        await store.setDeliversNotifications(true)
        let catalogFile = FileManager.default.temporaryDirectory.appendingPathComponent("bench-catalog-\(UUID().uuidString).json")
        try options.storekeeperCatalog.write(to: catalogFile)
        defer { try? FileManager.default.removeItem(at: catalogFile) }
        let apiKey = P256.Signing.PrivateKey()
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
                    apiKeyId: "BENCHKEY02",
                    apiIssuerId: UUID().uuidString.lowercased(),
                    apiKeyPEM: apiKey.pemRepresentation,
                    // Notifications carry everything the analytics need; nothing calls this address.
                    serverAPIURL: URL(string: "http://127.0.0.1:9")!
                )
            ],
            auth: AuthConfiguration(jwtHS256Secret: secret, adminKeys: ["bench": adminKey]),
            // Periodic jobs that would run on the real clock are off; notifications are applied as of the simulator's.
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
        return try await TemporaryServer.run(configuration: configuration, logger: logger) { client, base in
            try await year(store: store, http: BenchHTTP(client: client, base: base, adminKey: adminKey), secret: secret)
        }
    }

    func year(store: SimulatedAppStore, http: BenchHTTP, secret: String) async throws -> Result {
        let start = await store.currentDate
        let scenario = AnalyticsYear(subscribers: options.subscribers, days: options.days, seed: options.seed)
        let fed = try await scenario.feed(store: store, http: http, userSecret: secret) { day, notifications in
            if day % 30 == 29 { FileHandle.standardError.write(Data("bench-analytics: day \(day + 1), \(notifications) notifications\n".utf8)) }
        }
        let notifications = fed.notifications
        let feedSeconds = fed.seconds

        // The rollup job takes what the year queued; the charts report what is still pending.
        let caughtUp = ContinuousClock.now
        var batches = 0
        while batches < 10_000, try await http.runJob("analytics-rollup", now: await store.currentDate) > 0 { batches += 1 }
        let catchUpSeconds = (ContinuousClock.now - caughtUp).seconds

        let end = start.addingTimeInterval(Double(options.days) * 86_400)
        let truth = await store.analyticsTruth(from: start, to: end)
        let from = RevenueReportBuilder.day(start)
        let to = RevenueReportBuilder.day(end)
        var compared = 0
        var mismatches: [String] = []
        var mismatchCount = 0
        var chartTimes: [Double] = []
        func chart(_ metric: String, currency: String? = nil) async throws -> BenchHTTP.Chart {
            let started = ContinuousClock.now
            var query = "from=\(from)&to=\(to)"
            if let currency { query += "&currency=\(currency)" }
            let answer: BenchHTTP.ChartAnswer = try await http.get("/v1/admin/analytics/charts/\(metric)?\(query)")
            chartTimes.append((ContinuousClock.now - started).seconds * 1_000)
            if answer.pending > 0 { mismatches.append("\(metric): \(answer.pending) changes still pending") }
            return answer.chart
        }
        var served: [String: [String: Int64]] = [:]
        func compare(_ series: BenchHTTP.Chart.Series?, _ key: String) {
            let points = series?.points ?? []
            for point in points { served[key, default: [:]][point.period] = point.value }
            if points.count != options.days {
                mismatchCount += 1
                mismatches.append("\(key): \(points.count) points, not \(options.days)")
            }
            for point in points {
                compared += 1
                let expected = truth.value(key, on: point.period)
                if point.value != expected {
                    mismatchCount += 1
                    if mismatches.count < 20 { mismatches.append("\(key) on \(point.period): server \(point.value), truth \(expected)") }
                }
            }
        }
        let counts = [
            ("active_subscriptions", "active"), ("active_trials", "trials"), ("new_subscriptions", "new"),
            ("reactivations", "reactivation"), ("renewals", "renewal"), ("trial_starts", "trial_start"),
            ("trial_conversions", "conversion"), ("refunds", "refunds"),
        ]
        for (metric, key) in counts { compare(try await chart(metric).series.first, key) }
        let churn = try await chart("churn")
        compare(churn.series.first { $0.name == "voluntary" }, "churn_voluntary")
        compare(churn.series.first { $0.name == "involuntary" }, "churn_involuntary")
        let currencies = Set(truth.days.values.flatMap(\.keys).compactMap { $0.split(separator: "|").dropFirst().first.map(String.init) })
        for currency in currencies.sorted() {
            compare(try await chart("mrr", currency: currency).series.first, "mrr|\(currency)")
            let revenue = try await chart("revenue", currency: currency)
            compare(revenue.series.first { $0.name == "gross" }, "revenue|\(currency)")
            compare(revenue.series.first { $0.name == "refunded" }, "refunded|\(currency)")
        }

        // Cohorts: each month's size, and how many are subscribed at each whole month of age.
        var cohortCompared = 0
        var cohortMismatches = 0
        let cohorts: BenchHTTP.Cohorts = try await http.get("/v1/admin/analytics/cohorts?from=\(from.prefix(7))&to=\(to.prefix(7))")
        let lastMonth = String(to.prefix(7))
        for month in truth.cohortSubscribers.keys where month < lastMonth {
            cohortCompared += 1
            guard let row = cohorts.cohorts.first(where: { $0.cohort == month }) else {
                cohortMismatches += 1
                mismatches.append("cohort \(month) missing")
                continue
            }
            if row.subscribers != truth.cohortSubscribers[month] {
                cohortMismatches += 1
                mismatches.append("cohort \(month): \(row.subscribers) subscribers, truth \(truth.cohortSubscribers[month] ?? 0)")
            }
            let expected = truth.cohortActive[month] ?? []
            for (age, active) in row.active.enumerated() {
                cohortCompared += 1
                if active != (age < expected.count ? expected[age] : 0) {
                    cohortMismatches += 1
                    if mismatches.count < 20 { mismatches.append("cohort \(month) at \(age) months: \(active), truth \(expected)") }
                }
            }
        }
        let eventReport = try await agreement(with: store, from: from, to: to, served: served)
        let totals = truth.days.values.reduce(into: [String: Int64]()) { totals, day in
            for (key, value) in day where !key.hasPrefix("mrr") && key != "active" && key != "trials" { totals[key, default: 0] += value }
        }
        return Result(
            subscribers: options.subscribers,
            days: options.days,
            notifications: notifications,
            pointsCompared: compared,
            pointMismatches: mismatchCount,
            cohortFiguresCompared: cohortCompared,
            cohortMismatches: cohortMismatches,
            firstMismatches: Array(mismatches.prefix(20)),
            totals: totals,
            feedSeconds: feedSeconds,
            catchUpSeconds: catchUpSeconds,
            chartRequests: chartTimes.count,
            chartMillisecondsMean: chartTimes.isEmpty ? 0 : chartTimes.reduce(0, +) / Double(chartTimes.count),
            chartMillisecondsMax: chartTimes.max() ?? 0,
            eventReport: eventReport
        )
    }

    /// One line of the charts' agreement with Apple's Subscription Event report.
    public struct EventAgreement: Sendable, Codable {
        public var name: String
        public var storekeeper: Int64
        public var apple: Int64
        public var daysCompared: Int
        public var daysDiffering: Int
        public var firstDifferences: [String]
    }

    /// The charts against Apple's Subscription Event report for the same days (Sales and Trends, as the simulator
    /// writes it from its own records), by README's documented differences: Apple's starts (Subscribe and the Start
    /// … Offer events) are Storekeeper's new subscriptions; Renew, Paid Subscription from Introductory Offer, Renewal
    /// from Billing Retry and plan changes (Upgrade, Downgrade, Crossgrade) are its renewals plus conversions;
    /// Reactivate its reactivations; Refund its refunds; Cancel its voluntary churn; and Canceled from Billing Retry,
    /// which Apple counts when it gives up, is its involuntary churn, counted when access ended, 60 days earlier.
    func agreement(
        with store: SimulatedAppStore,
        from: String,
        to: String,
        served: [String: [String: Int64]]
    ) async throws -> [EventAgreement] {
        var apple: [String: [String: Int64]] = [:]
        guard var day = ReportCalendar.Day(from) else { return [] }
        while day.description < to {
            if case .report(let text) = try await store.dailySubscriptionEventReport(day: day.description) {
                for row in try SubscriptionEventReportRow.rows(of: ReportTable(tsv: text)) {
                    apple[row.event, default: [:]][row.eventDate, default: 0] += Int64(row.quantity)
                }
            }
            day = day.adding(days: 1)
        }
        let days = Set(served["new"]?.keys.map { $0 } ?? []).sorted()
        func line(_ name: String, storekeeper keys: [String], apple events: [String], shift: Int = 0) -> EventAgreement {
            var result = EventAgreement(name: name, storekeeper: 0, apple: 0, daysCompared: 0, daysDiffering: 0, firstDifferences: [])
            for (index, day) in days.enumerated() where index + shift < days.count {
                let ours = keys.reduce(Int64(0)) { $0 + (served[$1]?[day] ?? 0) }
                let appleDay = days[index + shift]
                let theirs = events.reduce(Int64(0)) { $0 + (apple[$1]?[appleDay] ?? 0) }
                result.storekeeper += ours
                result.apple += theirs
                result.daysCompared += 1
                if ours != theirs {
                    result.daysDiffering += 1
                    if result.firstDifferences.count < 5 {
                        result.firstDifferences.append("\(day): Storekeeper \(ours), Apple \(theirs) on \(appleDay)")
                    }
                }
            }
            return result
        }
        return [
            line(
                "starts",
                storekeeper: ["new"],
                apple: ["Subscribe", "Start Introductory Offer", "Start Offer Code", "Start Promotional Offer"]
            ),
            line("reactivations", storekeeper: ["reactivation"], apple: ["Reactivate"]),
            line(
                "renewals and conversions",
                storekeeper: ["renewal", "conversion"],
                apple: ["Renew", "Paid Subscription from Introductory Offer", "Renewal from Billing Retry", "Upgrade", "Downgrade", "Crossgrade"]
            ),
            line("conversions", storekeeper: ["conversion"], apple: ["Paid Subscription from Introductory Offer"]),
            line("refunds", storekeeper: ["refunds"], apple: ["Refund"]),
            line("voluntary churn", storekeeper: ["churn_voluntary"], apple: ["Cancel"]),
            line("involuntary churn (Apple 60 days later)", storekeeper: ["churn_involuntary"], apple: ["Canceled from Billing Retry"], shift: 60),
        ]
    }
}

/// The few calls the analytics benchmark makes to the server, as JSON over loopback HTTP.
struct BenchHTTP: Sendable {
    let client: HTTPClient
    let base: String
    let adminKey: String

    struct ChartAnswer: Decodable {
        var chart: Chart
        var pending: Int
    }

    struct Chart: Decodable {
        struct Series: Decodable {
            struct Point: Decodable {
                var period: String
                var value: Int64
            }
            var name: String
            var points: [Point]
        }
        var series: [Series]
    }

    struct Cohorts: Decodable {
        struct Row: Decodable {
            var cohort: String
            var subscribers: Int64
            var active: [Int64]
        }
        var cohorts: [Row]
    }

    struct Failed: Error, CustomStringConvertible {
        var description: String
    }

    func send(_ method: HTTPMethod, _ path: String, json: String? = nil, headers: [(String, String)]) async throws -> Data {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: json))
        }
        let response = try await client.execute(request, timeout: .minutes(5))
        let body = Data((try await response.body.collect(upTo: 64 << 20)).readableBytesView)
        guard (200..<300).contains(response.status.code) else {
            throw Failed(description: "\(method) \(path): \(response.status.code) \(String(decoding: body.prefix(500), as: UTF8.self))")
        }
        return body
    }

    func get<Answer: Decodable>(_ path: String) async throws -> Answer {
        try JSONDecoder().decode(Answer.self, from: try await send(.GET, path, headers: [("X-Admin-Key", adminKey)]))
    }

    func order(product: String, user: String, secret: String) async throws -> UUID {
        let token = UserTokenVerifier.hs256Token(subject: user, secret: secret, lifetime: 86_400)
        let body = try await send(.POST, "/v1/orders", json: #"{"productId":"\#(product)"}"#, headers: [("Authorization", "Bearer " + token)])
        struct Order: Decodable { var appAccountToken: UUID }
        return try JSONDecoder().decode(Order.self, from: body).appAccountToken
    }

    /// Runs a lifecycle job as of `now`; returns how many items it handled.
    func runJob(_ name: String, now: Date) async throws -> Int {
        let millis = Int64((now.timeIntervalSince1970 * 1_000).rounded(.down))
        let body = try await send(.POST, "/v1/admin/jobs/\(name)/run", json: #"{"now":\#(millis)}"#, headers: [("X-Admin-Key", adminKey)])
        struct Ran: Decodable { var items: Int }
        return try JSONDecoder().decode(Ran.self, from: body).items
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// SplitMix64, so a scenario is the same on every run with the same seed.
struct SeededGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
