import AppStoreWire
import Foundation

/// App Store Connect's reports, for reconciling each day against Apple's books: the vendor number, a team API key
/// with the Sales (or Finance) role, and how often the daily reconciliation runs.
public struct ReportsConfiguration: Sendable {
    public var vendorNumber: String
    public var keyId: String
    public var issuerId: String
    /// The team key (`.p8`) PEM.
    public var privateKeyPEM: String
    /// App Store Connect, or a simulator.
    public var url: String
    /// How often the daily job looks for days to reconcile; nil turns it off (`storekeeper reconcile` still works).
    public var reconcileInterval: Duration?
    /// How many days back the daily job reconciles (Apple's reports come T+1; refunds and late reports later).
    public var lookbackDays: Int
    /// The days and fiscal months reports are cut by: Apple's agreement time zone (Pacific Time for worldwide ones).
    public var calendar: ReportCalendar
    /// How many of a day's delivered transactions reconciling it asks Apple about (Get Transaction Info, 50 a second
    /// at most per app): the rest are named in the day's message and asked about when the day is reconciled again.
    public var transactionLookupsPerDay: Int = 1_000
    /// Whether subscriptions are compared with Analytics Reports' Subscription Event and Subscription State reports
    /// (requested `ONGOING` for each app with an Apple ID when it has none; needs the Admin role once, then Sales and
    /// Reports), falling back to Sales and Trends' subscription reports for days they do not cover.
    public var analyticsReports: Bool = true

    public init(
        vendorNumber: String,
        keyId: String,
        issuerId: String,
        privateKeyPEM: String,
        url: String = "https://api.appstoreconnect.apple.com",
        reconcileInterval: Duration? = .seconds(3_600),
        lookbackDays: Int = 3,
        calendar: ReportCalendar = .apple
    ) {
        self.vendorNumber = vendorNumber
        self.keyId = keyId
        self.issuerId = issuerId
        self.privateKeyPEM = privateKeyPEM
        self.url = url
        self.reconcileInterval = reconcileInterval
        self.lookbackDays = lookbackDays
        self.calendar = calendar
    }

    /// Reads `reports.*`: `vendorNumber` (none: no reconciliation), `key.id`, `key.issuer`, `key.path` (the team
    /// key's `.p8`), `url`, `reconcileSeconds` (3600; 0 off), `lookbackDays` (3; 1-31), `timeZone`
    /// (`America/Los_Angeles`, Apple's for worldwide agreements; an IANA name), `transactionLookupsPerDay` (1000;
    /// 0: the per-transaction check only re-verifies signatures), `analyticsReports` (true).
    static func read(reader: StrictConfigReader) throws -> ReportsConfiguration? {
        guard let vendorNumber = try reader.string("vendorNumber") else { return nil }
        guard !vendorNumber.isEmpty, vendorNumber.utf8.count <= 32, vendorNumber.allSatisfy({ $0.isNumber }) else {
            throw ConfigurationError.invalid("reports.vendorNumber must be App Store Connect's vendor number (digits)")
        }
        guard let keyId = try reader.string("key.id"), let issuerId = try reader.string("key.issuer"),
            let path = try reader.string("key.path")
        else {
            throw ConfigurationError.missing("reports.key.id, reports.key.issuer and reports.key.path (the team key) with reports.vendorNumber")
        }
        let pem: String
        do {
            pem = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError.invalid("reports.key.path: cannot read \(path)")
        }
        let zoneName = try reader.string("timeZone") ?? ReportCalendar.appleTimeZone
        guard zoneName.utf8.count <= 64, let zone = TimeZone(identifier: zoneName) else {
            throw ConfigurationError.invalid("reports.timeZone must be an IANA time zone such as America/Los_Angeles")
        }
        let seconds = try reader.int("reconcileSeconds", in: 0...(7 * 86_400), default: 3_600)
        var configuration = ReportsConfiguration(
            vendorNumber: vendorNumber,
            keyId: keyId,
            issuerId: issuerId,
            privateKeyPEM: pem,
            url: try reader.string("url", default: "https://api.appstoreconnect.apple.com"),
            reconcileInterval: seconds > 0 ? .seconds(seconds) : nil,
            lookbackDays: try reader.int("lookbackDays", in: 1...31, default: 3),
            calendar: ReportCalendar(timeZone: zone)
        )
        configuration.transactionLookupsPerDay = try reader.int("transactionLookupsPerDay", in: 0...100_000, default: 1_000)
        configuration.analyticsReports = try reader.bool("analyticsReports", default: true)
        return configuration
    }
}

extension ReportsConfiguration: CustomStringConvertible {
    public var description: String {
        "ReportsConfiguration(vendorNumber: \(vendorNumber), keyId: \(keyId), url: \(url), privateKey: <redacted>)"
    }
}
