import Foundation

/// Where Apple's books and Storekeeper's disagree, per UTC day × product × storefront × currency (reference §11,
/// seeds 000 and 004): purchases Apple counted that Storekeeper never delivered, deliveries Apple never reported,
/// refunds never taken back, prices and proceeds that differ. Pure: both sides are tallied by the caller.
public enum Reconciliation {
    /// The line both sides are counted on. `storefront` is ISO 3166-1 alpha-3 (`USA`), as transactions carry it.
    public struct Key: Sendable, Hashable, Comparable, Codable {
        public var day: String
        public var productId: String
        public var storefront: String
        public var currency: String

        public init(day: String, productId: String, storefront: String, currency: String) {
            self.day = day
            self.productId = productId
            self.storefront = storefront
            self.currency = currency
        }

        public static func < (a: Self, b: Self) -> Bool {
            (a.day, a.productId, a.storefront, a.currency) < (b.day, b.productId, b.storefront, b.currency)
        }
    }

    /// Units and money (milliunits) on one line, with some of the transactions behind it (Storekeeper's side).
    public struct Tally: Sendable, Hashable, Codable {
        public var units: Int64 = 0
        public var customerPrice: Int64 = 0
        public var proceeds: Int64 = 0
        /// Up to ``sampleLimit`` transaction ids, in the order they were added.
        public var transactionIds: [String] = []

        public static let sampleLimit = 50

        public init(units: Int64 = 0, customerPrice: Int64 = 0, proceeds: Int64 = 0, transactionIds: [String] = []) {
            self.units = units
            self.customerPrice = customerPrice
            self.proceeds = proceeds
            self.transactionIds = transactionIds
        }

        /// Adds one line's figures; sums saturate instead of trapping (each figure is bounded by its source).
        public mutating func add(units: Int64, customerPrice: Int64, proceeds: Int64, transactionId: String? = nil) {
            self.units = Self.saturating(self.units, units)
            self.customerPrice = Self.saturating(self.customerPrice, customerPrice)
            self.proceeds = Self.saturating(self.proceeds, proceeds)
            if let transactionId, transactionIds.count < Self.sampleLimit { transactionIds.append(transactionId) }
        }

        /// Adds another tally's figures and as much of its sample as fits.
        public mutating func merge(_ other: Tally) {
            add(units: other.units, customerPrice: other.customerPrice, proceeds: other.proceeds)
            transactionIds += other.transactionIds.prefix(max(0, Self.sampleLimit - transactionIds.count))
        }

        public static func saturating(_ a: Int64, _ b: Int64) -> Int64 {
            let (sum, overflow) = a.addingReportingOverflow(b)
            return overflow ? (b > 0 ? .max : .min) : sum
        }
    }

    /// One side's tallies: purchases on their purchase day, refunds on their refund day (as Apple books them).
    public struct Side: Sendable, Hashable {
        public var purchases: [Key: Tally] = [:]
        public var refunds: [Key: Tally] = [:]

        public init() {}

        public var purchaseUnits: Int64 { purchases.values.reduce(0) { $0 + $1.units } }
        public var refundUnits: Int64 { refunds.values.reduce(0) { $0 + $1.units } }
    }

    /// What a finding says.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// Apple counted purchases Storekeeper never delivered: lost orders.
        case appleOnly = "apple_only"
        /// Storekeeper delivered purchases Apple never reported: a forgery, a replay, a sandbox purchase taken for
        /// production, or a delivery written around Storekeeper.
        case storekeeperOnly = "storekeeper_only"
        /// Apple (or Google) refunded purchases Storekeeper never took back.
        case refundNotClawedBack = "refund_not_clawed_back"
        /// Storekeeper took back refunds the store's report does not show.
        case refundNotReported = "refund_not_reported"
        /// The same units at different customer prices.
        case priceMismatch = "price_mismatch"
        /// The same units and prices, proceeds apart by more than a cent a unit.
        case proceedsMismatch = "proceeds_mismatch"
        /// Apple's Subscription Report counts other subscribers at the day's end (standard price or in an offer).
        case subscribersDiffer = "subscribers_differ"
        /// Apple's Subscription Event Report counts other new subscriptions (free trials included).
        case subscriptionStartsDiffer = "subscription_starts_differ"
        /// … other periods after the first (renewals, conversions, plan changes, reactivations).
        case subscriptionRenewalsDiffer = "subscription_renewals_differ"
        /// … other conversions from an offer (a free trial, an introductory or promotional price) to a paid period.
        case subscriptionConversionsDiffer = "subscription_conversions_differ"
        /// … other subscriptions ending (cancellations, billing retry given up).
        case subscriptionEndsDiffer = "subscription_ends_differ"
        /// A delivered transaction whose stored signed payload no longer verifies to Apple's root (or says something
        /// else than the stored row): per transaction, so it cannot cancel out against a lost order.
        case signatureInvalid = "signature_invalid"
        /// A delivered transaction Apple's Get Transaction Info does not know: delivered without a purchase.
        case unknownToApple = "unknown_to_apple"
        /// Google's earnings report charges an order Storekeeper never delivered: a lost Play order.
        case googleOnly = "google_only"
        /// Storekeeper delivered a Play order Google's earnings report never charged (a test purchase taken for
        /// production, a forged or replayed token, an order paid by a plan change's unused time).
        case unknownToGoogle = "unknown_to_google"
    }

    /// One disagreement.
    public struct Finding: Sendable, Hashable, Codable {
        public var kind: Kind
        public var key: Key
        public var appleUnits: Int64
        public var storekeeperUnits: Int64
        /// Customer price (or proceeds, for ``Kind/proceedsMismatch``), milliunits of `key.currency`.
        public var appleAmount: Int64
        public var storekeeperAmount: Int64
        /// Storekeeper's transactions on the line (a sample), for support to look at.
        public var transactionIds: [String]
        public var detail: String

        public init(
            kind: Kind,
            key: Key,
            appleUnits: Int64,
            storekeeperUnits: Int64,
            appleAmount: Int64,
            storekeeperAmount: Int64,
            transactionIds: [String],
            detail: String
        ) {
            self.kind = kind
            self.key = key
            self.appleUnits = appleUnits
            self.storekeeperUnits = storekeeperUnits
            self.appleAmount = appleAmount
            self.storekeeperAmount = storekeeperAmount
            self.transactionIds = transactionIds
            self.detail = detail
        }
    }

    /// Apple's reports show proceeds per unit rounded to the cent; Storekeeper's estimate is to the milliunit.
    public static let proceedsTolerancePerUnit: Int64 = 10

    /// Every disagreement between `apple` and `storekeeper`, ordered by line and kind.
    /// With `comparePrices` false (a report without customer prices), units and proceeds are compared, not prices.
    public static func compare(apple: Side, storekeeper: Side, comparePrices: Bool = true) -> [Finding] {
        var findings: [Finding] = []
        for key in Set(apple.purchases.keys).union(storekeeper.purchases.keys).sorted() {
            let a = apple.purchases[key] ?? Tally()
            let s = storekeeper.purchases[key] ?? Tally()
            func finding(_ kind: Kind, _ appleAmount: Int64, _ storekeeperAmount: Int64, _ detail: String) -> Finding {
                Finding(
                    kind: kind,
                    key: key,
                    appleUnits: a.units,
                    storekeeperUnits: s.units,
                    appleAmount: appleAmount,
                    storekeeperAmount: storekeeperAmount,
                    transactionIds: s.transactionIds,
                    detail: detail
                )
            }
            if a.units > s.units {
                findings.append(
                    finding(
                        .appleOnly,
                        a.customerPrice,
                        s.customerPrice,
                        "Apple counted \(a.units - s.units) purchase(s) Storekeeper never delivered"
                    )
                )
            } else if s.units > a.units {
                findings.append(
                    finding(
                        .storekeeperOnly,
                        a.customerPrice,
                        s.customerPrice,
                        "Storekeeper delivered \(s.units - a.units) purchase(s) Apple's report does not show"
                    )
                )
            } else if comparePrices && a.customerPrice != s.customerPrice {
                findings.append(finding(.priceMismatch, a.customerPrice, s.customerPrice, "the same \(a.units) unit(s) at different prices"))
            } else {
                let tolerance = tolerance(units: a.units)
                if (a.proceeds - s.proceeds).magnitude > tolerance.magnitude {
                    findings.append(
                        finding(
                            .proceedsMismatch,
                            a.proceeds,
                            s.proceeds,
                            "proceeds differ by more than a cent a unit (Storekeeper's are an estimate)"
                        )
                    )
                }
            }
        }
        for key in Set(apple.refunds.keys).union(storekeeper.refunds.keys).sorted() {
            let a = apple.refunds[key] ?? Tally()
            let s = storekeeper.refunds[key] ?? Tally()
            guard a.units != s.units else { continue }
            let apple = a.units > s.units
            findings.append(
                Finding(
                    kind: apple ? .refundNotClawedBack : .refundNotReported,
                    key: key,
                    appleUnits: a.units,
                    storekeeperUnits: s.units,
                    appleAmount: a.customerPrice,
                    storekeeperAmount: s.customerPrice,
                    transactionIds: s.transactionIds,
                    detail: apple
                        ? "Apple refunded \(a.units - s.units) purchase(s) Storekeeper never took back"
                        : "Storekeeper took back \(s.units - a.units) refund(s) Apple's report does not show"
                )
            )
        }
        return findings
    }

    static func tolerance(units: Int64) -> Int64 {
        let (product, overflow) = Int64(clamping: units.magnitude).multipliedReportingOverflow(by: proceedsTolerancePerUnit)
        return overflow ? .max : product
    }

    /// Storekeeper's side, built one original transaction at a time (as ``RevenueReportBuilder``): paid
    /// production purchases in `[from, to)` with Storekeeper's proceeds estimate; free periods, sandbox and family
    /// members' copies left out, as Apple's sales reports leave them out. Every line is keyed by `period`, the name of
    /// the report's day or fiscal month (Apple's days are not UTC days, so it is never derived from a date here).
    public struct StorekeeperSideBuilder: Sendable {
        public let from: Date
        public let to: Date
        public let period: String
        public let smallBusiness: SmallBusinessProgram
        public private(set) var side = Side()

        public init(from: Date, to: Date, period: String, smallBusiness: SmallBusinessProgram = SmallBusinessProgram()) {
            self.from = from
            self.to = to
            self.period = period
            self.smallBusiness = smallBusiness
        }

        public mutating func add(history: [RevenueTransaction]) {
            let periods = history.compactMap { transaction -> (start: Date, end: Date, paid: Bool)? in
                guard transaction.kind == .autoRenewable, let end = transaction.expiresDate, transaction.commerce.revocationType == nil else {
                    return nil
                }
                let paid = (transaction.commerce.price ?? 0) > 0 && transaction.commerce.offerDiscountType != "FREE_TRIAL"
                return (transaction.purchaseDate, end, paid)
            }
            for transaction in history where transaction.purchaseDate >= from && transaction.purchaseDate < to {
                // Apple's reports have Apple's sales only.
                guard transaction.store == .appStore, (transaction.commerce.price ?? 0) > 0, let storefront = transaction.commerce.storefront
                else { continue }
                let paidService =
                    transaction.kind == .autoRenewable ? Proceeds.paidService(before: transaction.purchaseDate, periods: periods) : 0
                guard
                    let estimate = Proceeds.estimate(
                        price: transaction.commerce.price,
                        currency: transaction.commerce.currency,
                        storefront: storefront,
                        sandbox: transaction.sandbox,
                        kind: transaction.kind,
                        purchaseDate: transaction.purchaseDate,
                        ownershipType: transaction.commerce.ownershipType,
                        paidServiceBefore: paidService,
                        smallBusiness: smallBusiness
                    )
                else { continue }
                let key = Key(
                    day: period,
                    productId: transaction.productId,
                    storefront: storefront,
                    currency: estimate.currency
                )
                side.purchases[key, default: Tally()].add(
                    units: Int64(max(transaction.quantity, 1)),
                    customerPrice: estimate.customerPrice,
                    proceeds: estimate.proceeds,
                    transactionId: transaction.transactionId
                )
            }
        }

        /// A refund Storekeeper applied: booked on `refundedAt`'s day at the refunded share of the price.
        public mutating func addRefund(_ transaction: RevenueTransaction, refundedAt: Date) {
            guard !transaction.sandbox, transaction.commerce.isSale, let price = transaction.commerce.price,
                price > 0, let currency = transaction.commerce.currency, let storefront = transaction.commerce.storefront,
                refundedAt >= from, refundedAt < to
            else { return }
            var refunded = price
            if transaction.commerce.revocationType == "REFUND_PRORATED" {
                let share = Int64(min(max(transaction.commerce.revocationPercentage ?? 100_000, 0), 100_000))
                refunded = price.multipliedReportingOverflow(by: share).overflow ? price : price * share / 100_000
            }
            let key = Key(day: period, productId: transaction.productId, storefront: storefront, currency: currency)
            side.refunds[key, default: Tally()].add(
                units: Int64(max(transaction.quantity, 1)),
                customerPrice: refunded,
                proceeds: 0,
                transactionId: transaction.transactionId
            )
        }
    }
}
