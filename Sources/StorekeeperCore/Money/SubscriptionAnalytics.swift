import Foundation

/// Subscription analytics for `[from, to)`, built one original transaction at a time from delivered periods (seed
/// 004's "watch the business"): new subscriptions, renewals, trial starts and how many became paid, subscribers and
/// monthly recurring revenue at the end, and cohorts by first purchase month with their revenue. Churn and recoveries
/// come from the stores' notifications (``add(_:count:productId:)``). Production only; family members' copies
/// are not subscribers of their own.
public struct SubscriptionAnalyticsBuilder: Sendable {
    /// One product's figures.
    public struct ProductLine: Sendable, Hashable, Codable {
        public var productId: String
        /// First periods (paid or trial) starting in range.
        public var newSubscriptions = 0
        /// Paid periods after the first starting in range.
        public var renewals = 0
        public var trialStarts = 0
        /// Trials started in range followed by a paid period (by the report's end).
        public var trialConversions = 0
        /// Subscribers in a period at the end of the range (trials included) and those in a free trial.
        public var activeAtEnd = 0
        public var trialsAtEnd = 0
        /// Ended by the customer in range.
        public var voluntaryChurn = 0
        /// Ended in range because billing retry gave up.
        public var billingChurn = 0
        /// Renewal charges that failed in range (into billing retry, or into a grace period: `graceEntered`).
        public var billingFailures = 0
        public var graceEntered = 0
        /// Paid again in range after a failure.
        public var recoveries = 0

        public init(productId: String) { self.productId = productId }
    }

    /// Monthly recurring revenue at the range's end, per product and currency (milliunits, periods scaled to 30 days).
    public struct Recurring: Sendable, Hashable, Codable {
        public var productId: String
        public var currency: String
        public var subscribers: Int
        public var monthly: Int64
    }

    /// Subscribers whose first period began in one month, and everything their periods brought in (milliunits).
    public struct Cohort: Sendable, Hashable, Codable {
        /// `YYYY-MM`.
        public var month: String
        public var currency: String
        public var subscribers: Int
        public var activeAtEnd: Int
        public var paidPeriods: Int
        public var gross: Int64
        public var refunded: Int64
    }

    public let from: Date
    public let to: Date
    private var products: [String: ProductLine] = [:]
    private var recurring: [String: Recurring] = [:]
    private var cohorts: [String: Cohort] = [:]

    public init(from: Date, to: Date) {
        self.from = from
        self.to = to
    }

    /// Adds one original transaction's periods (any order; periods from `to` on are ignored).
    public mutating func add(history: [RevenueTransaction]) {
        let periods = history.filter {
            $0.kind == .autoRenewable && !$0.sandbox && $0.commerce.isSale && $0.purchaseDate < to
        }
        .sorted { $0.purchaseDate < $1.purchaseDate }
        guard let first = periods.first else { return }
        func isTrial(_ t: RevenueTransaction) -> Bool { (t.commerce.price ?? 0) == 0 || t.commerce.offerDiscountType == "FREE_TRIAL" }
        func isRefunded(_ t: RevenueTransaction) -> Bool { t.commerce.revocationType != nil }
        for (index, period) in periods.enumerated() where period.purchaseDate >= from {
            var line = products[period.productId] ?? ProductLine(productId: period.productId)
            if index == 0 {
                line.newSubscriptions += 1
            } else if !isTrial(period) {
                line.renewals += 1
            }
            if isTrial(period) {
                line.trialStarts += 1
                if periods[(index + 1)...].contains(where: { !isTrial($0) && !isRefunded($0) }) { line.trialConversions += 1 }
            }
            products[period.productId] = line
        }
        // Who is subscribed when the range ends.
        let current = periods.last { ($0.expiresDate ?? .distantPast) >= to && !isRefunded($0) }
        if let current {
            var line = products[current.productId] ?? ProductLine(productId: current.productId)
            line.activeAtEnd += 1
            if isTrial(current) {
                line.trialsAtEnd += 1
            } else if let price = current.commerce.price, let currency = current.commerce.currency, let end = current.expiresDate {
                let days = max(1, end.timeIntervalSince(current.purchaseDate) / 86_400)
                var entry =
                    recurring["\(current.productId)\u{1}\(currency)"]
                    ?? Recurring(productId: current.productId, currency: currency, subscribers: 0, monthly: 0)
                entry.subscribers += 1
                entry.monthly = Self.saturating(entry.monthly, Int64((Double(price) * 30 / days).rounded()))
                recurring["\(current.productId)\u{1}\(currency)"] = entry
            }
            products[current.productId] = line
        }
        // The cohort of the first period's month, in the currency of its paid periods.
        let month = String(RevenueReportBuilder.day(first.purchaseDate).prefix(7))
        let currency = periods.first { $0.commerce.currency != nil }?.commerce.currency ?? ""
        var cohort =
            cohorts["\(month)\u{1}\(currency)"]
            ?? Cohort(month: month, currency: currency, subscribers: 0, activeAtEnd: 0, paidPeriods: 0, gross: 0, refunded: 0)
        cohort.subscribers += 1
        if current != nil { cohort.activeAtEnd += 1 }
        for period in periods where !isTrial(period) {
            cohort.paidPeriods += 1
            let price = min(max(period.commerce.price ?? 0, 0), Proceeds.maxPrice)
            cohort.gross = Self.saturating(cohort.gross, price)
            if isRefunded(period) {
                var share: Int64 = 100_000
                if period.commerce.revocationType == "REFUND_PRORATED" {
                    share = Int64(min(max(period.commerce.revocationPercentage ?? 100_000, 0), 100_000))
                }
                // price ≤ Proceeds.maxPrice (10^13) and share ≤ 10^5: the product fits in Int64.
                cohort.refunded = Self.saturating(cohort.refunded, price * share / 100_000)
            }
        }
        cohorts["\(month)\u{1}\(currency)"] = cohort
    }

    /// A lifecycle message the analytics count (the store's mapping says which of its messages are which).
    public enum LifecycleCount: Sendable, Hashable {
        case voluntaryChurn
        case billingChurn
        case billingFailure(gracePeriod: Bool)
        case recovery
    }

    /// Adds `count` lifecycle messages of one kind about a product.
    public mutating func add(_ lifecycle: LifecycleCount, count: Int, productId: String) {
        var line = products[productId] ?? ProductLine(productId: productId)
        switch lifecycle {
        case .voluntaryChurn: line.voluntaryChurn += count
        case .billingChurn: line.billingChurn += count
        case .billingFailure(let grace):
            line.billingFailures += count
            if grace { line.graceEntered += count }
        case .recovery: line.recoveries += count
        }
        products[productId] = line
    }

    public var productLines: [ProductLine] { products.values.sorted { $0.productId < $1.productId } }
    public var recurringRevenue: [Recurring] { recurring.values.sorted { ($0.productId, $0.currency) < ($1.productId, $1.currency) } }
    public var cohortLines: [Cohort] { cohorts.values.sorted { ($0.month, $0.currency) < ($1.month, $1.currency) } }

    static func saturating(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }
}
