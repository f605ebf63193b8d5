import Foundation

/// What one transaction earned, estimated from what Apple signed (price, currency, storefront, offer, revocation):
/// the customer price, the tax inside it where the storefront's prices include tax, Apple's commission and the
/// developer's proceeds, and what a refund took back. Amounts are milliunits of `currency` (9990 is 9.99).
///
/// An estimate, not the books: Apple's reports are the accounting source of record (reconciliation compares them).
/// `exact` is true only where the arithmetic is Apple's: storefronts whose prices exclude tax (United States,
/// Canada). Where prices include VAT or GST, proceeds are taken on the price less the storefront's standard rate,
/// which Apple's per-tier tables round differently and reduced rates can change: marked as estimates.
public struct ProceedsEstimate: Sendable, Hashable, Codable {
    public var customerPrice: Int64
    public var currency: String
    /// The tax included in `customerPrice` (zero where prices exclude tax).
    public var tax: Int64
    /// Apple's commission in thousandths: 300 (standard) or 150.
    public var commissionPermille: Int
    public var reason: CommissionReason
    /// The developer's share before any refund.
    public var proceeds: Int64
    /// What the customer got back (a full or prorated refund), and the proceeds that went with it.
    public var refundedPrice: Int64
    public var refundedProceeds: Int64
    public var exact: Bool

    /// Proceeds after refunds.
    public var netProceeds: Int64 { proceeds - refundedProceeds }
    /// Customer price after refunds.
    public var netPrice: Int64 { customerPrice - refundedPrice }

    /// The estimate of a multiseat purchase `refundedSeats` of whose `seats` Apple refunded (and nothing else): each
    /// seat at the average price Apple reports, so the price and proceeds of those seats went back.
    public func refunding(seats refundedSeats: Int?, of seats: Int) -> ProceedsEstimate {
        guard let refundedSeats, refundedSeats > 0, seats > 0, refundedPrice == 0 else { return self }
        let share = Int64(min(refundedSeats, seats))
        var estimate = self
        // Amounts are at most 10^13 and seats at most a few thousand: the products fit.
        estimate.refundedPrice = customerPrice.multipliedReportingOverflow(by: share).partialValue / Int64(seats)
        estimate.refundedProceeds = proceeds.multipliedReportingOverflow(by: share).partialValue / Int64(seats)
        return estimate
    }
}

/// Why Apple takes the commission it takes.
public enum CommissionReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// 30 %.
    case standard
    /// 15 %: the app is in the App Store Small Business Program for the purchase date.
    case smallBusinessProgram
    /// 15 %: an auto-renewable subscription after one year of paid service.
    case subscriptionAfterOneYear
    /// Google Play's service fee: the one its order names (15 % on subscriptions and on other products within a
    /// developer's first US$1 million of earnings in a year, 30 % beyond), or 15 % when the order was not read.
    case googlePlay
}

/// The periods an app was in the App Store Small Business Program (15 % commission on everything sold then).
public struct SmallBusinessProgram: Sendable, Hashable, Codable {
    /// Half-open `[start, end)` intervals; an open end is `nil`.
    public var periods: [Period]

    public struct Period: Sendable, Hashable, Codable {
        public var start: Date
        public var end: Date?

        public init(start: Date, end: Date? = nil) {
            self.start = start
            self.end = end
        }
    }

    public init(periods: [Period] = []) { self.periods = periods }

    public func covers(_ date: Date) -> Bool {
        periods.contains { $0.start <= date && $0.end.map { date < $0 } ?? true }
    }
}

/// The estimate's arithmetic, as pure functions.
public enum Proceeds {
    /// A paid subscription earns the reduced rate once its subscriber has this much paid service.
    public static let oneYearOfPaidService: TimeInterval = 365 * 86_400
    /// A lapse of paid service no longer than this keeps the days already accumulated; a longer one starts over.
    public static let lapseKeepingPaidService: TimeInterval = 60 * 86_400

    /// What one transaction earned; `nil` when it earned nothing to count: a sandbox purchase (never revenue), a
    /// family member's shared copy (the organiser's transaction carries the money), one without a price or
    /// currency (a legacy receipt), or a price this arithmetic cannot hold.
    ///
    /// - Parameters:
    ///   - paidServiceBefore: for an auto-renewable subscription, the paid service its subscriber had accumulated
    ///     when this period began (``paidService(before:periods:)``).
    ///   - smallBusiness: the app's program membership.
    ///   - storeFeePermille: the fee the store says it took (Google Play's order), used instead of the rule.
    public static func estimate(
        price: Int64?,
        currency: String?,
        storefront: String?,
        sandbox: Bool,
        kind: ProductKind,
        purchaseDate: Date,
        ownershipType: String? = nil,
        revocationType: String? = nil,
        revocationPercentage: Int? = nil,
        paidServiceBefore: TimeInterval = 0,
        smallBusiness: SmallBusinessProgram = SmallBusinessProgram(),
        store: Store = .appStore,
        storeFeePermille: Int? = nil
    ) -> ProceedsEstimate? {
        guard !sandbox, TransactionCommerce.isSale(ownershipType: ownershipType), let price, let currency, price >= 0, price <= maxPrice else {
            return nil
        }
        let reason: CommissionReason =
            if store == .googlePlay {
                .googlePlay
            } else if smallBusiness.covers(purchaseDate) {
                .smallBusinessProgram
            } else if kind == .autoRenewable && paidServiceBefore >= oneYearOfPaidService {
                .subscriptionAfterOneYear
            } else {
                .standard
            }
        // The fee the store named for this transaction (Google's order) outranks the rule of thumb.
        let commission = storeFeePermille.map { min(max($0, 0), 1000) } ?? (reason == .standard ? 300 : 150)
        let taxRate = storefront.flatMap { StorefrontTax.includedRatePermille[$0.uppercased()] }
        let exclusive = storefront.map { StorefrontTax.exclusive.contains($0.uppercased()) } ?? false
        // price = net · (1 + rate): the tax inside it is price · rate / (1000 + rate).
        let tax = taxRate.map { divide(price * Int64($0), by: 1000 + Int64($0)) } ?? 0
        let proceeds = divide((price - tax) * Int64(1000 - commission), by: 1000)
        // Apple's revocation percentage is in milliunits: 100000 is all of it.
        let refundedShare: Int64? =
            switch revocationType {
            case "REFUND_FULL": 100_000
            case "REFUND_PRORATED": Int64(min(max(revocationPercentage ?? 100_000, 0), 100_000))
            default: nil
            }
        return ProceedsEstimate(
            customerPrice: price,
            currency: currency,
            tax: tax,
            commissionPermille: commission,
            reason: reason,
            proceeds: proceeds,
            refundedPrice: refundedShare.map { divide(price * $0, by: 100_000) } ?? 0,
            refundedProceeds: refundedShare.map { divide(proceeds * $0, by: 100_000) } ?? 0,
            // Google's fee is on the price net of the tax it collects, which a Play purchase does not carry.
            exact: exclusive && taxRate == nil && store == .appStore
        )
    }

    /// Prices above this (ten billion units) are not estimated: every product of the arithmetic stays in `Int64`.
    public static let maxPrice: Int64 = 10_000_000_000_000

    /// Paid service a subscriber had accumulated at `moment`, as Apple counts it for the reduced rate: the days of
    /// paid periods before it (free trials are not paid), where a lapse of up to 60 days keeps the count and a longer
    /// one starts it again. Overlapping periods count once.
    public static func paidService(before moment: Date, periods: [(start: Date, end: Date, paid: Bool)]) -> TimeInterval {
        var accumulated: TimeInterval = 0
        var lastEnd: Date?
        for period in periods.filter(\.paid).sorted(by: { $0.start < $1.start }) where period.start < moment {
            let start = max(period.start, lastEnd ?? period.start)
            if let lastEnd, period.start.timeIntervalSince(lastEnd) > lapseKeepingPaidService { accumulated = 0 }
            let end = min(period.end, moment)
            if end > start { accumulated += end.timeIntervalSince(start) }
            lastEnd = max(lastEnd ?? period.end, period.end)
        }
        if let lastEnd, moment.timeIntervalSince(lastEnd) > lapseKeepingPaidService { return 0 }
        return accumulated
    }

    /// `value / divisor`, rounded half away from zero.
    static func divide(_ value: Int64, by divisor: Int64) -> Int64 {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return abs(remainder) * 2 >= divisor ? quotient + (value < 0 ? -1 : 1) : quotient
    }
}

/// Which storefronts' prices include tax, and at what standard rate (thousandths), for the estimate.
public enum StorefrontTax {
    /// Prices exclude sales tax: the price is what Apple's commission is taken on.
    public static let exclusive: Set<String> = ["USA", "CAN"]
    /// Standard VAT / GST / consumption-tax rates for the largest storefronts whose prices include tax. A reduced
    /// rate (e-books, news) or a local surcharge is not modelled: estimates.
    public static let includedRatePermille: [String: Int] = [
        "GBR": 200, "DEU": 190, "FRA": 200, "ITA": 220, "ESP": 210, "NLD": 210, "BEL": 210, "AUT": 200, "IRL": 230,
        "SWE": 250, "DNK": 250, "FIN": 255, "NOR": 250, "POL": 230, "PRT": 230, "CHE": 81, "JPN": 100, "KOR": 100,
        "AUS": 100, "NZL": 150, "CHN": 60, "IND": 180, "SGP": 90, "MEX": 160, "TUR": 200, "ZAF": 150,
    ]
}
