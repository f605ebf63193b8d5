import Foundation

/// What one subscription adds to the analytics rollups, computed from its facts alone (its periods, their
/// revocations, the churns its store reported), so a changed subscription is re-rolled by subtracting what its old
/// facts added and adding what its new ones add. The definitions are README's "Subscription analytics".
///
/// Daily cells are keyed by UTC day; stock metrics (`active`, `trials`, `mrr`) are stored as changes on the day they
/// happen, so a day's figure is the sum of every change up to it. Cohort cells are keyed by the month of the first
/// period and the subscriber's age in whole months.
public struct SubscriptionRollup: Sendable, Hashable {
    /// One period (a store transaction) as the rollup reads it.
    public struct Period: Sendable, Hashable {
        public var productId: String
        public var start: Date
        public var end: Date
        /// Milliunits of `currency`; 0 for a free trial.
        public var price: Int64
        public var currency: String
        public var storefront: String
        /// ``SubscriptionRollup/offerLabel(type:id:)``; empty outside an offer.
        public var offer: String
        public var trial: Bool
        /// When a standing refund or revocation ended it, and whether it was a refund (with the refunded share, in
        /// hundred-thousandths) or another revocation.
        public var revokedAt: Date?
        public var refundShare: Int?

        public init(
            productId: String,
            start: Date,
            end: Date,
            price: Int64,
            currency: String,
            storefront: String,
            offer: String,
            trial: Bool,
            revokedAt: Date? = nil,
            refundShare: Int? = nil
        ) {
            self.productId = productId
            self.start = start
            self.end = end
            self.price = price
            self.currency = currency
            self.storefront = storefront
            self.offer = offer
            self.trial = trial
            self.revokedAt = revokedAt
            self.refundShare = refundShare
        }
    }

    /// Access ended and the store said so: `involuntary` when billing retry gave up.
    public struct Churn: Sendable, Hashable {
        public var at: Date
        public var involuntary: Bool

        public init(at: Date, involuntary: Bool) {
            self.at = at
            self.involuntary = involuntary
        }
    }

    public var app: String
    public var store: Store
    public var periods: [Period]
    public var churns: [Churn]

    public init(app: String, store: Store, periods: [Period], churns: [Churn]) {
        self.app = app
        self.store = store
        self.periods = periods.sorted { ($0.start, $0.end, $0.productId) < ($1.start, $1.end, $1.productId) }
        self.churns = churns.sorted { ($0.at, $0.involuntary ? 1 : 0) < ($1.at, $1.involuntary ? 1 : 0) }
    }

    /// The dimensions every figure can be filtered by.
    public struct Dimensions: Sendable, Hashable, Codable {
        public var app: String
        public var store: Store
        public var productId: String
        public var storefront: String
        public var offer: String
        public var currency: String

        public init(app: String, store: Store, productId: String, storefront: String, offer: String, currency: String) {
            self.app = app
            self.store = store
            self.productId = productId
            self.storefront = storefront
            self.offer = offer
            self.currency = currency
        }
    }

    /// A daily figure's cell.
    public struct DayKey: Sendable, Hashable {
        /// `YYYY-MM-DD`.
        public var day: String
        public var dimensions: Dimensions
        public var metric: AnalyticsMetric
    }

    /// A cohort figure's cell.
    public struct CohortKey: Sendable, Hashable {
        /// `YYYY-MM` of the first period.
        public var cohort: String
        /// Whole months since the first period began.
        public var age: Int
        public var dimensions: Dimensions
        public var metric: AnalyticsMetric
    }

    /// Everything one subscription adds (cells that net to zero left out).
    public struct Cells: Sendable, Hashable {
        public var days: [DayKey: Int64] = [:]
        public var cohorts: [CohortKey: Int64] = [:]

        public init() {}

        mutating func add(_ key: DayKey, _ value: Int64) {
            guard value != 0 else { return }
            let sum = (days[key] ?? 0).addingSaturating(value)
            days[key] = sum == 0 ? nil : sum
        }

        mutating func add(_ key: CohortKey, _ value: Int64) {
            guard value != 0 else { return }
            let sum = (cohorts[key] ?? 0).addingSaturating(value)
            cohorts[key] = sum == 0 ? nil : sum
        }

        /// `self - other`, cell by cell: what to add to the rollups when a subscription's cells go from `other` to
        /// `self`.
        public func subtracting(_ other: Cells) -> Cells {
            var result = self
            for (key, value) in other.days { result.add(key, value == .min ? .max : -value) }
            for (key, value) in other.cohorts { result.add(key, value == .min ? .max : -value) }
            return result
        }

        /// Adds another subscription's cells.
        public mutating func merge(_ other: Cells) {
            for (key, value) in other.days { add(key, value) }
            for (key, value) in other.cohorts { add(key, value) }
        }
    }

    /// Cohort ages kept: two years of monthly retention and revenue.
    public static let maxAge = 24
    /// Period numbers the renewal rate tells apart; later ones count as the last.
    public static let maxPeriodNumber = 12

    /// The cells this subscription adds.
    public var cells: Cells {
        var cells = Cells()
        guard let first = periods.first else { return cells }
        func dims(_ period: Period) -> Dimensions {
            Dimensions(
                app: app,
                store: store,
                productId: period.productId,
                storefront: period.storefront,
                offer: period.offer,
                currency: period.currency
            )
        }
        func day(_ metric: AnalyticsMetric, _ date: Date, _ period: Period, _ value: Int64) {
            cells.add(DayKey(day: RevenueReportBuilder.day(date), dimensions: dims(period), metric: metric), value)
        }
        // A period ends at its expiry, at a standing revocation, or when the next period (an upgrade, a crossgrade)
        // replaces it, whichever comes first.
        let ends: [Date] = periods.indices.map { index in
            var end = periods[index].end
            if let revoked = periods[index].revokedAt { end = min(end, revoked) }
            if index + 1 < periods.count { end = min(end, max(periods[index + 1].start, periods[index].start)) }
            return end
        }
        // Which churn each period ends in: the first the store reported at or after the period's start and before
        // the next period began (one per period).
        var churnAfter: [Int: Churn] = [:]
        for churn in churns {
            guard let index = periods.lastIndex(where: { $0.start <= churn.at }) ?? (periods.isEmpty ? nil : 0) else { continue }
            if churnAfter[index] == nil { churnAfter[index] = churn }
        }
        var paidNumber = 0
        for (index, period) in periods.enumerated() {
            let end = ends[index]
            let previous = index > 0 ? periods[index - 1] : nil
            let afterChurn = index > 0 && churnAfter[index - 1] != nil
            if index == 0 {
                day(.new, period.start, period, 1)
            } else if afterChurn {
                day(.reactivation, period.start, period, 1)
            }
            if period.trial {
                day(.trialStart, period.start, period, 1)
            } else {
                paidNumber += 1
                day(.paid, period.start, period, 1)
                day(.revenue, period.start, period, period.price)
                if let previous, previous.trial, !afterChurn {
                    day(.conversion, period.start, period, 1)
                } else if index > 0, !afterChurn {
                    day(.renewal, period.start, period, 1)
                }
                // Renewal rate: a paid period that ran its course either renewed into a paid one or did not.
                if period.revokedAt == nil {
                    let number = min(paidNumber, Self.maxPeriodNumber)
                    day(.renewalsDue(number), end, period, 1)
                    if index + 1 < periods.count, !periods[index + 1].trial, churnAfter[index] == nil {
                        day(.renewed(number), end, period, 1)
                    }
                }
                if let revoked = period.revokedAt, let share = period.refundShare {
                    day(.refunds, revoked, period, 1)
                    day(.refunded, revoked, period, Self.share(period.price, share))
                }
            }
            if end > period.start {
                // In force at a day's end: from the day its start falls in (a start at midnight counts the day before).
                let from = period.start.addingTimeInterval(-0.001)
                let until = end.addingTimeInterval(-0.001)
                let stock: AnalyticsMetric = period.trial ? .trials : .active
                day(stock, from, period, 1)
                day(stock, until, period, -1)
                if !period.trial {
                    let monthly = Self.monthly(price: period.price, start: period.start, end: period.end)
                    day(.mrr, from, period, monthly)
                    day(.mrr, until, period, -monthly)
                }
            }
            if let churn = churnAfter[index] {
                // Access ended when the period did (or when the store said so, if that came first).
                day(churn.involuntary ? .involuntaryChurn : .voluntaryChurn, min(end, max(churn.at, period.start)), period, 1)
            }
        }
        // The cohort: the month the first period began, on the first period's dimensions.
        let cohort = String(RevenueReportBuilder.day(first.start).prefix(7))
        let cohortDims = dims(first)
        func cohortCell(_ metric: AnalyticsMetric, age: Int, _ value: Int64, _ dimensions: Dimensions = cohortDims) {
            cells.add(CohortKey(cohort: cohort, age: age, dimensions: dimensions, metric: metric), value)
        }
        cohortCell(.subscribers, age: 0, 1)
        for age in 1...Self.maxAge {
            let moment = Self.adding(months: age, to: first.start)
            if periods.indices.contains(where: { periods[$0].start <= moment && moment < ends[$0] }) {
                cohortCell(.active, age: age, 1)
            }
        }
        for period in periods where !period.trial {
            let age = Self.months(from: first.start, to: period.start)
            guard age <= Self.maxAge else { continue }
            var revenueDims = cohortDims
            revenueDims.currency = period.currency
            cohortCell(.revenue, age: age, period.price, revenueDims)
            if period.revokedAt != nil, let share = period.refundShare {
                cohortCell(.refunded, age: age, Self.share(period.price, share), revenueDims)
            }
        }
        return cells
    }

    /// The part of `price` a refund of `share` hundred-thousandths gave back.
    static func share(_ price: Int64, _ share: Int) -> Int64 {
        let price = min(max(price, 0), Proceeds.maxPrice)
        // price ≤ 10^13 and share ≤ 10^5: the product fits in Int64.
        return price * Int64(min(max(share, 0), 100_000)) / 100_000
    }

    /// A period's price as a month's: a period of about a week counts 52/12 times per month and its multiples
    /// accordingly; a longer one is divided by its length in whole months (a year by 12). Rounded half up, to the
    /// milliunit.
    public static func monthly(price: Int64, start: Date, end: Date) -> Int64 {
        let price = min(max(price, 0), Proceeds.maxPrice)
        let days = max(0, end.timeIntervalSince(start)) / 86_400
        if days < 25 {
            let weeks = Int64(max(1, (days / 7).rounded()))
            // price ≤ 10^13: price × 104 fits in Int64.
            return (price * 104 + 12 * weeks) / (24 * weeks)
        }
        let months = Int64(max(1, (days / 30.436875).rounded()))
        return (price * 2 + months) / (2 * months)
    }

    /// The offer a period was bought with, as the `offer` dimension names it: `introductory`, `promotional:ID`,
    /// `offer_code:ID`, `win_back:ID`, `retention:ID`, or empty.
    public static func offerLabel(type: Int?, id: String?) -> String {
        let id = id.map { ":" + $0 } ?? ""
        switch type {
        case nil: return ""
        case 1?: return "introductory"
        case 2?: return "promotional" + id
        case 3?: return "offer_code" + id
        case 4?: return "win_back" + id
        case 5?: return "retention" + id
        case let other?: return "offer\(other)" + id
        }
    }

    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// `date` plus whole calendar months in UTC (the 31st becomes the month's last day).
    public static func adding(months: Int, to date: Date) -> Date {
        calendar.date(byAdding: .month, value: months, to: date) ?? date
    }

    /// Whole calendar months from `start` to `date` (0 when `date` is earlier).
    public static func months(from start: Date, to date: Date) -> Int {
        guard date > start else { return 0 }
        var months = max(0, calendar.dateComponents([.month], from: start, to: date).month ?? 0)
        while months > 0, adding(months: months, to: start) > date { months -= 1 }
        while adding(months: months + 1, to: start) <= date { months += 1 }
        return months
    }
}

/// A figure the rollups keep. Stock metrics are stored as changes; the others count or sum what happened on a day.
public enum AnalyticsMetric: Sendable, Hashable {
    case active, trials, mrr
    case new, reactivation, trialStart, conversion, renewal
    case voluntaryChurn, involuntaryChurn
    case refunds, refunded, revenue
    /// Paid periods that began.
    case paid
    /// Paid periods number `n` that ended (renewal due) and those that renewed into a paid period.
    case renewalsDue(Int)
    case renewed(Int)
    /// Cohort cells: first periods (age 0).
    case subscribers

    /// The stored name.
    public var name: String {
        switch self {
        case .active: "active"
        case .trials: "trials"
        case .mrr: "mrr"
        case .new: "new"
        case .reactivation: "reactivation"
        case .trialStart: "trial_start"
        case .conversion: "conversion"
        case .renewal: "renewal"
        case .voluntaryChurn: "churn_voluntary"
        case .involuntaryChurn: "churn_involuntary"
        case .refunds: "refunds"
        case .refunded: "refunded"
        case .revenue: "revenue"
        case .paid: "paid"
        case .renewalsDue(let n): "due_\(n)"
        case .renewed(let n): "renewed_\(n)"
        case .subscribers: "subscribers"
        }
    }

    public init?(name: String) {
        let simple: [AnalyticsMetric] = [
            .active, .trials, .mrr, .new, .reactivation, .trialStart, .conversion, .renewal, .voluntaryChurn, .involuntaryChurn,
            .refunds, .refunded, .revenue, .paid, .subscribers,
        ]
        if let match = simple.first(where: { $0.name == name }) {
            self = match
        } else if name.hasPrefix("due_"), let n = Int(name.dropFirst(4)), (1...SubscriptionRollup.maxPeriodNumber).contains(n) {
            self = .renewalsDue(n)
        } else if name.hasPrefix("renewed_"), let n = Int(name.dropFirst(8)), (1...SubscriptionRollup.maxPeriodNumber).contains(n) {
            self = .renewed(n)
        } else {
            return nil
        }
    }

    /// Stock metrics: a day's figure is the running sum of changes.
    public var isStock: Bool { self == .active || self == .trials || self == .mrr }
    /// Money, in milliunits of the cell's currency.
    public var isMoney: Bool { self == .mrr || self == .refunded || self == .revenue }
}

extension SubscriptionRollup {
    /// The facts in a compact text (arrays, epoch milliseconds): what the rollups keep per subscription to take its
    /// cells back out when its facts change.
    public var encoded: String {
        let body = Compact(
            app: app,
            store: store.rawValue,
            periods: periods.map {
                CompactPeriod(
                    productId: $0.productId,
                    start: $0.start.millis,
                    end: $0.end.millis,
                    price: $0.price,
                    currency: $0.currency,
                    storefront: $0.storefront,
                    offer: $0.offer,
                    trial: $0.trial,
                    revokedAt: $0.revokedAt?.millis,
                    refundShare: $0.refundShare
                )
            },
            churns: churns.map { [$0.at.millis, $0.involuntary ? 1 : 0] }
        )
        return (try? String(decoding: JSONEncoder().encode(body), as: UTF8.self)) ?? "{}"
    }

    /// The facts ``encoded`` wrote; nil for text it did not write.
    public init?(encoded: String) {
        guard let body = try? JSONDecoder().decode(Compact.self, from: Data(encoded.utf8)), let store = Store(rawValue: body.store) else {
            return nil
        }
        self.init(
            app: body.app,
            store: store,
            periods: body.periods.map {
                Period(
                    productId: $0.productId,
                    start: Date(millis: $0.start),
                    end: Date(millis: $0.end),
                    price: $0.price,
                    currency: $0.currency,
                    storefront: $0.storefront,
                    offer: $0.offer,
                    trial: $0.trial,
                    revokedAt: $0.revokedAt.map(Date.init(millis:)),
                    refundShare: $0.refundShare
                )
            },
            churns: body.churns.compactMap { $0.count == 2 ? Churn(at: Date(millis: $0[0]), involuntary: $0[1] != 0) : nil }
        )
    }

    private struct Compact: Codable {
        var app: String
        var store: String
        var periods: [CompactPeriod]
        var churns: [[Int64]]

        enum CodingKeys: String, CodingKey {
            case app = "a"
            case store = "s"
            case periods = "p"
            case churns = "c"
        }
    }

    /// A period as one JSON array.
    private struct CompactPeriod: Codable {
        var productId: String
        var start: Int64
        var end: Int64
        var price: Int64
        var currency: String
        var storefront: String
        var offer: String
        var trial: Bool
        var revokedAt: Int64?
        var refundShare: Int?

        init(
            productId: String,
            start: Int64,
            end: Int64,
            price: Int64,
            currency: String,
            storefront: String,
            offer: String,
            trial: Bool,
            revokedAt: Int64?,
            refundShare: Int?
        ) {
            self.productId = productId
            self.start = start
            self.end = end
            self.price = price
            self.currency = currency
            self.storefront = storefront
            self.offer = offer
            self.trial = trial
            self.revokedAt = revokedAt
            self.refundShare = refundShare
        }

        init(from decoder: any Decoder) throws {
            var c = try decoder.unkeyedContainer()
            productId = try c.decode(String.self)
            start = try c.decode(Int64.self)
            end = try c.decode(Int64.self)
            price = try c.decode(Int64.self)
            currency = try c.decode(String.self)
            storefront = try c.decode(String.self)
            offer = try c.decode(String.self)
            trial = try c.decode(Int.self) != 0
            revokedAt = try c.decodeNil() ? nil : try c.decode(Int64.self)
            refundShare = try c.isAtEnd || c.decodeNil() ? nil : try c.decode(Int.self)
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.unkeyedContainer()
            try c.encode(productId)
            try c.encode(start)
            try c.encode(end)
            try c.encode(price)
            try c.encode(currency)
            try c.encode(storefront)
            try c.encode(offer)
            try c.encode(trial ? 1 : 0)
            if let revokedAt { try c.encode(revokedAt) } else { try c.encodeNil() }
            if let refundShare { try c.encode(refundShare) } else { try c.encodeNil() }
        }
    }
}
