import Foundation

/// One line of a Subscription Event Report (Sales and Trends, `reportType=SUBSCRIPTION_EVENT`, `SUMMARY`, `DAILY`,
/// `1_3`): how many times one lifecycle event (`Subscribe`, `Renew`, `Cancel`, …) happened to one subscription in one
/// country on the report's day. Lines are aggregated: ``quantity`` counts the events behind them.
public struct SubscriptionEventReportRow: Sendable, Hashable {
    /// `YYYY-MM-DD` (a `MM/DD/YYYY` in the file is read as the same day).
    public var eventDate: String
    public var event: String
    public var appName: String
    public var appAppleId: String?
    public var subscriptionName: String
    public var subscriptionAppleId: String
    public var subscriptionGroupId: String?
    public var standardDuration: String?
    /// `Free Trial`, `Pay As You Go`, `Pay Up Front`, or nil.
    public var offerType: String?
    public var offerDuration: String?
    public var proceedsReason: String?
    public var consecutivePaidPeriods: Int?
    public var originalStartDate: String?
    /// ISO 3166-1 alpha-2.
    public var country: String
    public var previousSubscriptionName: String?
    public var previousSubscriptionAppleId: String?
    public var cancellationReason: String?
    public var quantity: Int

    public init(
        eventDate: String,
        event: String,
        appName: String,
        appAppleId: String? = nil,
        subscriptionName: String,
        subscriptionAppleId: String,
        subscriptionGroupId: String? = nil,
        standardDuration: String? = nil,
        offerType: String? = nil,
        offerDuration: String? = nil,
        proceedsReason: String? = nil,
        consecutivePaidPeriods: Int? = nil,
        originalStartDate: String? = nil,
        country: String,
        previousSubscriptionName: String? = nil,
        previousSubscriptionAppleId: String? = nil,
        cancellationReason: String? = nil,
        quantity: Int
    ) {
        self.eventDate = eventDate
        self.event = event
        self.appName = appName
        self.appAppleId = appAppleId
        self.subscriptionName = subscriptionName
        self.subscriptionAppleId = subscriptionAppleId
        self.subscriptionGroupId = subscriptionGroupId
        self.standardDuration = standardDuration
        self.offerType = offerType
        self.offerDuration = offerDuration
        self.proceedsReason = proceedsReason
        self.consecutivePaidPeriods = consecutivePaidPeriods
        self.originalStartDate = originalStartDate
        self.country = country
        self.previousSubscriptionName = previousSubscriptionName
        self.previousSubscriptionAppleId = previousSubscriptionAppleId
        self.cancellationReason = cancellationReason
        self.quantity = quantity
    }

    /// What kind of change an event is, for comparing with what Storekeeper saw.
    public enum Group: String, Sendable, Hashable, CaseIterable {
        /// A new subscription: `Subscribe`, `Start Introductory Offer`, `Start Offer Code`, `Opt-In`, …
        case start
        /// A period after the first: `Renew`, `Paid Subscription from Introductory Offer`, `Reactivate`, upgrades,
        /// downgrades and crossgrades, renewals out of billing retry.
        case continuation
        /// The subscription ended: `Cancel`, `Canceled from Billing Retry`, … (Apple counts it when the period ends).
        case end
        /// Into billing retry: `Billing Retry from Paid Subscription`, …
        case billingRetry
        case refund
    }

    /// The group of `event`, by Apple's names (older spellings too: "Introductory Price", "Cancelled"); nil for an
    /// event Storekeeper does not compare.
    public static func group(of event: String) -> Group? {
        let name = event.trimmingCharacters(in: .whitespaces).lowercased()
        if name.hasPrefix("billing retry") { return .billingRetry }
        if name.hasPrefix("cancel") { return .end }
        if name == "refund" { return .refund }
        if name == "subscribe" || name == "opt-in" || name.hasPrefix("start ") { return .start }
        let continuations = [
            "renew", "renewal", "paid subscription from", "reactivat", "upgrade", "downgrade", "crossgrade", "introductory offer from",
            "introductory price from",
        ]
        if continuations.contains(where: { name.hasPrefix($0) }) { return .continuation }
        return nil
    }

    /// The columns of version 1_3 in the order Apple's help lists them (readers go by name, regardless of case).
    public static let columns = [
        "Event Date", "Event", "App Name", "App Apple ID", "Subscription Name", "Subscription Apple ID", "Subscription Group ID",
        "Standard Subscription Duration", "Subscription Offer Type", "Subscription Offer Duration", "Marketing Opt-In",
        "Marketing Opt-In Duration", "Preserved Pricing", "Proceeds Reason", "Subscription Offer Name", "Promotional Offer ID",
        "Consecutive Paid Periods", "Original Start Date", "Device", "Client", "State", "Country", "Previous Subscription Name",
        "Previous Subscription Apple ID", "Days Before Canceling", "Cancellation Reason", "Days Canceled", "Quantity",
    ]

    static let required = ["Event Date", "Event", "Subscription Name", "Subscription Apple ID", "Country", "Quantity"]

    /// Reads every line; throws naming the line and column of a value it cannot read.
    public static func rows(of table: ReportTable) throws -> [SubscriptionEventReportRow] {
        let at = try table.positions(of: required)
        return try table.rows.enumerated().map { index, row in
            func field(_ column: String) -> String? {
                guard let position = at[column] ?? table.position(of: column) else { return nil }
                let value = row[position].trimmingCharacters(in: .whitespaces)
                return value.isEmpty ? nil : value
            }
            guard let quantityText = field("Quantity"), let quantity = Int(quantityText), (0...SubscriptionReportRow.maximumCount).contains(quantity)
            else {
                throw ReportTable.Failure("row \(index + 1): Quantity \"\((field("Quantity") ?? "").prefix(40))\" is not a count")
            }
            guard let event = field("Event") else { throw ReportTable.Failure("row \(index + 1): no Event") }
            guard let date = field("Event Date").flatMap(Self.day) else {
                throw ReportTable.Failure("row \(index + 1): Event Date \"\((field("Event Date") ?? "").prefix(40))\" is not a date")
            }
            let periods = field("Consecutive Paid Periods")
            return SubscriptionEventReportRow(
                eventDate: date,
                event: event,
                appName: field("App Name") ?? "",
                appAppleId: field("App Apple ID"),
                subscriptionName: field("Subscription Name") ?? "",
                subscriptionAppleId: field("Subscription Apple ID") ?? "",
                subscriptionGroupId: field("Subscription Group ID"),
                standardDuration: field("Standard Subscription Duration"),
                offerType: field("Subscription Offer Type"),
                offerDuration: field("Subscription Offer Duration"),
                proceedsReason: field("Proceeds Reason"),
                consecutivePaidPeriods: periods.flatMap { Int($0) },
                originalStartDate: field("Original Start Date"),
                country: field("Country") ?? "",
                previousSubscriptionName: field("Previous Subscription Name"),
                previousSubscriptionAppleId: field("Previous Subscription Apple ID"),
                cancellationReason: field("Cancellation Reason"),
                quantity: quantity
            )
        }
    }

    /// `YYYY-MM-DD` from `YYYY-MM-DD` or `MM/DD/YYYY`, or nil.
    static func day(_ text: String) -> String? {
        if ReportCalendar.Day(text) != nil { return text }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].utf8.count == 2, parts[1].utf8.count == 2, parts[2].utf8.count == 4 else { return nil }
        let day = "\(parts[2])-\(parts[0])-\(parts[1])"
        return ReportCalendar.Day(day) != nil ? day : nil
    }

    /// The line in the 1_3 layout of ``columns`` (fields Storekeeper does not model left empty).
    public var fields: [String] {
        [
            eventDate, event, appName, appAppleId ?? "", subscriptionName, subscriptionAppleId, subscriptionGroupId ?? "", standardDuration ?? "",
            offerType ?? "", offerDuration ?? "", "", "", "", proceedsReason ?? "", "", "", consecutivePaidPeriods.map(String.init) ?? "",
            originalStartDate ?? "", "iPhone", "", "", country, previousSubscriptionName ?? "", previousSubscriptionAppleId ?? "", "",
            cancellationReason ?? "", "", String(quantity),
        ]
    }
}
