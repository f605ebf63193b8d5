/// Apple's own subscription counts by where the app was downloaded from (App Store Connect's Analytics Reports, as
/// reconciliation read them): per product × download source, the new subscriptions, periods after the first,
/// conversions from offers and churn over a range of report days, and the subscriptions active at the end of its last
/// day Apple reported.
public struct SubscriptionSourcesReport: Sendable, Hashable {
    /// One count Apple reported for a day: a measure of one product in one territory, from one download source.
    public struct Count: Sendable, Hashable {
        /// What is counted.
        public enum Measure: String, Sendable, Hashable, CaseIterable {
            case start, continuation, conversion, churn
            /// Active at the day's end, at the standard price or in an offer; in a billing issue (grace, retry).
            case activeStandard = "active_standard"
            case activeOffer = "active_offer"
            case billingIssue = "billing_issue"
        }

        public var productId: String
        /// ISO 3166-1 alpha-3.
        public var territory: String
        public var measure: Measure
        /// Apple's `App Download Source Type` (`App Store search`, `Web referrer`, ...; `Unavailable` when Apple
        /// has none).
        public var downloadSource: String
        public var counts: Int64

        public init(productId: String, territory: String, measure: Measure, downloadSource: String, counts: Int64) {
            self.productId = productId
            self.territory = territory
            self.measure = measure
            self.downloadSource = downloadSource
            self.counts = counts
        }
    }

    /// One product × download source.
    public struct Line: Sendable, Hashable {
        public var productId: String
        public var downloadSource: String
        public var starts: Int64 = 0
        public var continuations: Int64 = 0
        public var conversions: Int64 = 0
        public var churn: Int64 = 0
        /// At the end of ``SubscriptionSourcesReport/lastDay``.
        public var activeAtEnd: Int64 = 0

        public init(productId: String, downloadSource: String) {
            self.productId = productId
            self.downloadSource = downloadSource
        }
    }

    /// The report days in range Apple's counts were read for.
    public var days: [String]
    public var lastDay: String?
    public var lines: [Line]

    public init(days: [String], lastDay: String?, lines: [Line]) {
        self.days = days
        self.lastDay = lastDay
        self.lines = lines
    }
}
