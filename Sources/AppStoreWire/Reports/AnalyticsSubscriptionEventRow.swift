import Foundation

/// One line of Analytics Reports' "App Store Subscription Event Standard" report (reference §12.5): how many times one
/// kind of subscription event (`Event Grouping` refined by `Event Sub Type`) happened to one subscription in one
/// territory on `Event Date`, by offer, plan change, cancellation reason and the app's download source. Read by column
/// name, values compared regardless of case (Apple's spellings come from its report definition pages).
public struct AnalyticsSubscriptionEventRow: Sendable, Hashable {
    public var eventDate: String
    public var appName: String
    public var appAppleId: String?
    public var eventGrouping: String
    public var eventSubType: String
    public var subscriptionName: String
    public var subscriptionId: String
    public var subscriptionGroupId: String?
    public var offerType: String?
    public var planChangeType: String?
    public var cancellationReason: String?
    /// `App Store search`, `App Store browse`, `App referrer`, `Web referrer`, `App Clip`, `Institutional purchase`,
    /// `Unavailable`.
    public var downloadSource: String?
    /// ISO 3166-1 alpha-2 (alpha-3 is read too).
    public var territory: String
    public var counts: Int

    public init(
        eventDate: String,
        appName: String,
        appAppleId: String? = nil,
        eventGrouping: String,
        eventSubType: String,
        subscriptionName: String,
        subscriptionId: String,
        subscriptionGroupId: String? = nil,
        offerType: String? = nil,
        planChangeType: String? = nil,
        cancellationReason: String? = nil,
        downloadSource: String? = nil,
        territory: String,
        counts: Int
    ) {
        self.eventDate = eventDate
        self.appName = appName
        self.appAppleId = appAppleId
        self.eventGrouping = eventGrouping
        self.eventSubType = eventSubType
        self.subscriptionName = subscriptionName
        self.subscriptionId = subscriptionId
        self.subscriptionGroupId = subscriptionGroupId
        self.offerType = offerType
        self.planChangeType = planChangeType
        self.cancellationReason = cancellationReason
        self.downloadSource = downloadSource
        self.territory = territory
        self.counts = counts
    }

    /// What Storekeeper compares an event grouping with.
    public enum Measure: String, Sendable, Hashable, CaseIterable {
        /// A new subscription: `Paid Subscription Starts`, `Offer Starts`.
        case start
        /// A period after the first: `Renewals`, `Offer Renewals`, `Paid Subscriptions from Offers`,
        /// `Commitment-Based Payments`, `Recoveries from Billing Issue`.
        case continuation
        /// An offer turned into a paid period: `Paid Subscriptions from Offers`.
        case conversion
        /// A subscription ended: `Voluntary Churn`, `Involuntary Churn`.
        case churn
    }

    /// The measures an `Event Grouping` counts toward (none for billing issues, exits and extensions).
    public static func measures(of grouping: String) -> [Measure] {
        switch grouping.trimmingCharacters(in: .whitespaces).lowercased() {
        case "paid subscription starts", "offer starts": [.start]
        case "paid subscriptions from offers": [.continuation, .conversion]
        case "renewals", "offer renewals", "commitment-based payments", "recoveries from billing issue": [.continuation]
        case "voluntary churn", "involuntary churn": [.churn]
        default: []
        }
    }

    /// The Standard variant's columns, in Apple's order.
    public static let columns = [
        "Event Date", "App Name", "App Apple Identifier", "Event Sub Type", "Event Grouping", "Subscription Name",
        "Subscription Identifier", "Subscription Duration", "Billing Frequency", "Billing Period", "Subscription Group",
        "Subscription Group Identifier", "Offer Type", "Offer Name", "Offer ID", "Vanity Code", "Offer Pricing", "Offer Duration",
        "Plan Change Type", "Previous Subscription Name", "Previous Subscription Identifier", "Family Sharing", "Cancellation Reason",
        "Paid Service Days Recovered", "App Download Source Type", "Page Type", "Pre-Order", "Original Purchase Device", "Territory",
        "Counts",
    ]

    static let required = ["Event Date", "Event Grouping", "Subscription Name", "Subscription Identifier", "Territory", "Counts"]

    /// Reads every line; throws naming the line and column of a value it cannot read.
    public static func rows(of table: ReportTable) throws -> [AnalyticsSubscriptionEventRow] {
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
            return AnalyticsSubscriptionEventRow(
                eventDate: AnalyticsCounts.day(row[at["Event Date"]!]),
                appName: optional(row, "App Name") ?? "",
                appAppleId: optional(row, "App Apple Identifier"),
                eventGrouping: row[at["Event Grouping"]!],
                eventSubType: optional(row, "Event Sub Type") ?? "",
                subscriptionName: row[at["Subscription Name"]!],
                subscriptionId: row[at["Subscription Identifier"]!],
                subscriptionGroupId: optional(row, "Subscription Group Identifier"),
                offerType: optional(row, "Offer Type"),
                planChangeType: optional(row, "Plan Change Type"),
                cancellationReason: optional(row, "Cancellation Reason"),
                downloadSource: optional(row, "App Download Source Type"),
                territory: row[at["Territory"]!].trimmingCharacters(in: .whitespaces),
                counts: counts
            )
        }
    }

    /// The line under ``columns``.
    public var fields: [String] {
        var values = [String: String]()
        values["Event Date"] = eventDate
        values["App Name"] = appName
        values["App Apple Identifier"] = appAppleId ?? ""
        values["Event Sub Type"] = eventSubType
        values["Event Grouping"] = eventGrouping
        values["Subscription Name"] = subscriptionName
        values["Subscription Identifier"] = subscriptionId
        values["Subscription Group Identifier"] = subscriptionGroupId ?? ""
        values["Offer Type"] = offerType ?? ""
        values["Plan Change Type"] = planChangeType ?? ""
        values["Family Sharing"] = "Individual"
        values["Cancellation Reason"] = cancellationReason ?? ""
        values["App Download Source Type"] = downloadSource ?? ""
        values["Territory"] = territory
        values["Counts"] = String(counts)
        return Self.columns.map { values[$0] ?? "" }
    }
}

/// Reading Analytics Reports' values.
enum AnalyticsCounts {
    /// A whole, non-negative count (Apple may write `3` or `3.0`), at most 10^12.
    static func parse(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let value = Int(trimmed), (0...1_000_000_000_000).contains(value) { return value }
        if let value = Double(trimmed), value.isFinite, value >= 0, value <= 1e12, value.rounded() == value { return Int(value) }
        return nil
    }

    /// `YYYY-MM-DD` (a `MM/DD/YYYY` is read as the same day).
    static func day(_ text: String) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.split(separator: "/")
        guard parts.count == 3, parts[2].count == 4 else { return trimmed }
        return "\(parts[2])-\(parts[0].count == 1 ? "0" : "")\(parts[0])-\(parts[1].count == 1 ? "0" : "")\(parts[1])"
    }
}
