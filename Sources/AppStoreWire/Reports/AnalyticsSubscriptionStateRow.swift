import Foundation

/// One line of Analytics Reports' "App Store Subscription State Standard" report (reference §12.5): how many
/// subscriptions of one subscription and territory were in one state (`State Metric`: free trials, paid offers, full
/// price, grace period, billing retry, churned, ...) at the end of `Date`, by offer and the app's download source.
public struct AnalyticsSubscriptionStateRow: Sendable, Hashable {
    public var date: String
    public var appName: String
    public var appAppleId: String?
    public var stateMetric: String
    public var stateMetricGrouping: String
    public var subscriptionName: String
    public var subscriptionId: String
    public var offerType: String?
    public var downloadSource: String?
    /// ISO 3166-1 alpha-2 (alpha-3 is read too).
    public var territory: String
    public var counts: Int

    public init(
        date: String,
        appName: String,
        appAppleId: String? = nil,
        stateMetric: String,
        stateMetricGrouping: String,
        subscriptionName: String,
        subscriptionId: String,
        offerType: String? = nil,
        downloadSource: String? = nil,
        territory: String,
        counts: Int
    ) {
        self.date = date
        self.appName = appName
        self.appAppleId = appAppleId
        self.stateMetric = stateMetric
        self.stateMetricGrouping = stateMetricGrouping
        self.subscriptionName = subscriptionName
        self.subscriptionId = subscriptionId
        self.offerType = offerType
        self.downloadSource = downloadSource
        self.territory = territory
        self.counts = counts
    }

    /// How a state counts among active subscriptions: in an offer, at the standard price, or not active (billing
    /// issues and churned subscriptions; a grace period is a billing issue too).
    public enum Standing: Sendable, Hashable {
        case inOffer, standard, notActive
    }

    public static func standing(of metric: String) -> Standing {
        switch metric.trimmingCharacters(in: .whitespaces).lowercased() {
        case "free trials", "paid offers": .inOffer
        case "full price", "preserved price", "contingent price": .standard
        default: .notActive
        }
    }

    /// The Standard variant's columns, in Apple's order.
    public static let columns = [
        "Date", "App Name", "App Apple Identifier", "State Metric", "State Metric Grouping", "Subscription Name",
        "Subscription Identifier", "Subscription Duration", "Billing Frequency", "Billing Period", "Subscription Group",
        "Subscription Group Identifier", "Offer Type", "Offer Name", "Offer ID", "Vanity Code", "Offer Pricing", "Offer Duration",
        "Family Sharing", "Cancellation Reason", "App Download Source Type", "Page Type", "Pre-Order", "Original Purchase Device",
        "Territory", "Counts",
    ]

    static let required = ["Date", "State Metric", "Subscription Name", "Subscription Identifier", "Territory", "Counts"]

    /// Reads every line; throws naming the line and column of a value it cannot read.
    public static func rows(of table: ReportTable) throws -> [AnalyticsSubscriptionStateRow] {
        let at = try table.positions(of: required)
        func optional(_ row: [String], _ column: String) -> String? {
            guard let index = table.position(of: column) else { return nil }
            let value = row[index].trimmingCharacters(in: .whitespaces)
            return value.isEmpty ? nil : value
        }
        return try table.rows.enumerated().map { line, row in
            guard let counts = AnalyticsCounts.parse(row[at["Counts"]!]) else {
                throw ReportTable.Failure("line \(line + 2): Counts \"\(row[at["Counts"]!])\" is not a count")
            }
            return AnalyticsSubscriptionStateRow(
                date: AnalyticsCounts.day(row[at["Date"]!]),
                appName: optional(row, "App Name") ?? "",
                appAppleId: optional(row, "App Apple Identifier"),
                stateMetric: row[at["State Metric"]!],
                stateMetricGrouping: optional(row, "State Metric Grouping") ?? "",
                subscriptionName: row[at["Subscription Name"]!],
                subscriptionId: row[at["Subscription Identifier"]!],
                offerType: optional(row, "Offer Type"),
                downloadSource: optional(row, "App Download Source Type"),
                territory: row[at["Territory"]!].trimmingCharacters(in: .whitespaces),
                counts: counts
            )
        }
    }

    /// The line under ``columns``.
    public var fields: [String] {
        var values = [String: String]()
        values["Date"] = date
        values["App Name"] = appName
        values["App Apple Identifier"] = appAppleId ?? ""
        values["State Metric"] = stateMetric
        values["State Metric Grouping"] = stateMetricGrouping
        values["Subscription Name"] = subscriptionName
        values["Subscription Identifier"] = subscriptionId
        values["Offer Type"] = offerType ?? ""
        values["Family Sharing"] = "Individual"
        values["App Download Source Type"] = downloadSource ?? ""
        values["Territory"] = territory
        values["Counts"] = String(counts)
        return Self.columns.map { values[$0] ?? "" }
    }
}
