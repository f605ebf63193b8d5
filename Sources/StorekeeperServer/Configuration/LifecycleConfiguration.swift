import Configuration
import Foundation
import StorekeeperCore

/// How Storekeeper follows purchases after the first: notification processing, refunds, the periodic jobs, and
/// the answers to Apple's refund questions.
public struct LifecycleConfiguration: Sendable {
    /// Spent coins on refund: `debt` (the wallet goes negative) or `floor` (forgiven, reported).
    public var coinClawback: CoinClawbackPolicy
    /// Notifications applied per database transaction.
    public var batchSize: Int
    /// Attempts before a failing notification becomes a dead letter.
    public var maxAttempts: Int
    /// How often an idle processor looks for due notifications (new ones wake it at once).
    public var pollInterval: Duration
    /// Whether this process applies notifications (off: it only stores them, another process applies).
    public var processNotifications: Bool
    /// How often Get Notification History is asked for missed notifications; nil turns catch-up off.
    public var catchUpInterval: Duration?
    /// How far back the first catch-up looks (Apple keeps 180 days, the default).
    public var catchUpLookback: TimeInterval
    /// How often the renewal sweep runs; nil turns it off.
    public var sweepInterval: Duration?
    /// How often due consumption requests are answered; nil turns the responder off.
    public var consumptionInterval: Duration?
    /// Whether customers consented to share consumption data (Apple refuses answers without it).
    public var customerConsented: Bool
    /// The refund preference sent per product kind (`DECLINE`, `GRANT_FULL`, `GRANT_PRORATED`; absent: none).
    public var refundPreference: [ProductKind: String]
    /// `v2` (Send Consumption Information, API 1.19) or `v1` (the older endpoint and body).
    public var consumptionAPIVersion: String
    /// How often the business metrics read the backlog counts (the outbox is followed every second, or this often
    /// if shorter); nil turns them off.
    public var metricsInterval: Duration?
    /// How often app account tokens are set at Apple for purchases that came without one; nil: only on demand.
    public var accountTokenInterval: Duration?
    /// How often delivered transactions without an app install are looked up; nil: only on demand.
    public var appTransactionInterval: Duration?
    /// How often delivered Google Play purchases still unacknowledged are acknowledged; nil: only on demand (the
    /// purchase path acknowledges each one at once after its commit: this catches what that missed).
    public var acknowledgeInterval: Duration? = .seconds(60)
    /// How often Google Play's voided purchases are listed as catch-up for refund notifications; nil: only on demand.
    public var playCatchUpInterval: Duration? = .seconds(3_600)
    /// How often Play sales are reconciled against Google's earnings reports (nil: on demand only).
    public var playReconcileInterval: Duration? = .seconds(86_400)
    /// How often the subscription analytics roll up what changed (nil: only before a read, or when asked).
    public var analyticsInterval: Duration? = .seconds(5)

    public init(
        coinClawback: CoinClawbackPolicy = .debt,
        batchSize: Int = 256,
        maxAttempts: Int = 8,
        pollInterval: Duration = .milliseconds(250),
        processNotifications: Bool = true,
        catchUpInterval: Duration? = .seconds(3_600),
        catchUpLookback: TimeInterval = 180 * 86_400,
        sweepInterval: Duration? = .seconds(900),
        consumptionInterval: Duration? = .seconds(30),
        customerConsented: Bool = false,
        refundPreference: [ProductKind: String] = [:],
        consumptionAPIVersion: String = "v2",
        metricsInterval: Duration? = .seconds(15),
        accountTokenInterval: Duration? = .seconds(5),
        appTransactionInterval: Duration? = .seconds(60)
    ) {
        self.coinClawback = coinClawback
        self.batchSize = batchSize
        self.maxAttempts = maxAttempts
        self.pollInterval = pollInterval
        self.processNotifications = processNotifications
        self.catchUpInterval = catchUpInterval
        self.catchUpLookback = catchUpLookback
        self.sweepInterval = sweepInterval
        self.consumptionInterval = consumptionInterval
        self.customerConsented = customerConsented
        self.refundPreference = refundPreference
        self.consumptionAPIVersion = consumptionAPIVersion
        self.metricsInterval = metricsInterval
        self.accountTokenInterval = accountTokenInterval
        self.appTransactionInterval = appTransactionInterval
    }

    /// Reads `lifecycle.*`: `coinClawback` (`debt` | `floor`), `batchSize` (256), `maxAttempts` (8),
    /// `pollMilliseconds` (250), `process` (true), `catchUpSeconds` (3600; 0 off), `catchUpLookbackDays` (180),
    /// `sweepSeconds` (900; 0 off), `consumption.intervalSeconds` (30; 0 off), `consumption.customerConsented`
    /// (false), `consumption.api` (`v2` | `v1`), `consumption.refundPreference.<kind>` for `consumable`,
    /// `nonConsumable`, `nonRenewing`, `autoRenewable`, `metricsSeconds` (15; 0 off), `accountTokenSeconds` (5; 0: on
    /// demand only), `appTransactionSeconds` (60; 0: on demand only), `acknowledgeSeconds` (60; 0: on demand only),
    /// `playCatchUpSeconds` (3600; 0: on demand only), `playReconcileSeconds` (86400; 0: on demand only),
    /// `analyticsSeconds` (5; 0: on demand only).
    /// Environment form: `LIFECYCLE_COIN_CLAWBACK`, ...
    init(reader: StrictConfigReader) throws {
        let policy = CoinClawbackPolicy(rawValue: try reader.choice("coinClawback", ["debt", "floor"], default: "debt")) ?? .debt
        func interval(_ key: String, _ fallback: Int) throws -> Duration? {
            let seconds = try reader.int(key, in: 0...(30 * 86_400), default: fallback)
            return seconds > 0 ? .seconds(seconds) : nil
        }
        var preferences: [ProductKind: String] = [:]
        for kind in ProductKind.allCases {
            guard let value = try reader.string("consumption.refundPreference.\(kind.rawValue)") else { continue }
            guard ["DECLINE", "GRANT_FULL", "GRANT_PRORATED"].contains(value) else {
                throw ConfigurationError.invalid(
                    "lifecycle.consumption.refundPreference.\(kind.rawValue) must be DECLINE, GRANT_FULL or GRANT_PRORATED"
                )
            }
            preferences[kind] = value
        }
        self.init(
            coinClawback: policy,
            batchSize: try reader.int("batchSize", in: 1...10_000, default: 256),
            maxAttempts: try reader.int("maxAttempts", in: 1...1_000, default: 8),
            pollInterval: .milliseconds(try reader.int("pollMilliseconds", in: 10...60_000, default: 250)),
            processNotifications: try reader.bool("process", default: true),
            catchUpInterval: try interval("catchUpSeconds", 3_600),
            catchUpLookback: Double(try reader.int("catchUpLookbackDays", in: 1...180, default: 180)) * 86_400,
            sweepInterval: try interval("sweepSeconds", 900),
            consumptionInterval: try interval("consumption.intervalSeconds", 30),
            customerConsented: try reader.bool("consumption.customerConsented", default: false),
            refundPreference: preferences,
            consumptionAPIVersion: try reader.choice("consumption.api", ["v2", "v1"], default: "v2"),
            metricsInterval: try interval("metricsSeconds", 15),
            accountTokenInterval: try interval("accountTokenSeconds", 5),
            appTransactionInterval: try interval("appTransactionSeconds", 60)
        )
        acknowledgeInterval = try interval("acknowledgeSeconds", 60)
        playCatchUpInterval = try interval("playCatchUpSeconds", 3_600)
        playReconcileInterval = try interval("playReconcileSeconds", 86_400)
        analyticsInterval = try interval("analyticsSeconds", 5)
    }
}
