import Foundation

/// A delivered transaction as the revenue report reads it.
public struct RevenueTransaction: Sendable, Hashable {
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var kind: ProductKind
    public var purchaseDate: Date
    public var expiresDate: Date?
    public var quantity: Int
    public var sandbox: Bool
    public var commerce: TransactionCommerce
    /// The store that sold it, whose fee the estimate takes.
    public var store: Store = .appStore

    public init(
        transactionId: String,
        originalTransactionId: String,
        productId: String,
        kind: ProductKind,
        purchaseDate: Date,
        expiresDate: Date?,
        quantity: Int,
        sandbox: Bool,
        commerce: TransactionCommerce
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.kind = kind
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.quantity = quantity
        self.sandbox = sandbox
        self.commerce = commerce
    }
}

/// One line of the revenue report: a UTC day × product × storefront × currency, in milliunits.
public struct RevenueLine: Sendable, Hashable, Codable {
    public var day: String
    public var productId: String
    public var storefront: String
    public var currency: String
    /// Paid transactions (a consumable bought 3 at a time counts its quantity).
    public var units: Int
    /// Free periods (a free trial, a free offer code): not units, as Apple's sales reports leave them out.
    public var freeUnits: Int
    public var gross: Int64
    public var tax: Int64
    public var proceeds: Int64
    public var refunds: Int64
    public var refundedProceeds: Int64
    /// Proceeds after refunds.
    public var net: Int64
    /// Every transaction in the line was estimated exactly (prices without tax).
    public var exact: Bool

    public init(
        day: String,
        productId: String,
        storefront: String,
        currency: String,
        units: Int,
        freeUnits: Int = 0,
        gross: Int64,
        tax: Int64,
        proceeds: Int64,
        refunds: Int64,
        refundedProceeds: Int64,
        net: Int64,
        exact: Bool
    ) {
        self.day = day
        self.productId = productId
        self.storefront = storefront
        self.currency = currency
        self.units = units
        self.freeUnits = freeUnits
        self.gross = gross
        self.tax = tax
        self.proceeds = proceeds
        self.refunds = refunds
        self.refundedProceeds = refundedProceeds
        self.net = net
        self.exact = exact
    }
}

/// Builds the revenue report for `[from, to)` one original transaction at a time, so rows can be streamed: a
/// subscription's earlier periods (even before `from`) decide whether a period in range earns 85 %.
///
/// Each transaction is booked on its purchase day; a refund is booked against the purchase it refunds (Apple's
/// reports book it on the refund day: reconciliation allows for that). Sandbox purchases, family members' shared
/// copies and transactions without a price are not revenue and are left out.
public struct RevenueReportBuilder: Sendable {
    public let from: Date
    public let to: Date
    public let smallBusiness: SmallBusinessProgram
    private var lines: [LineKey: RevenueLine] = [:]
    /// Transactions left out (sandbox, family sharing, no price).
    public private(set) var skipped = 0

    struct LineKey: Hashable {
        var day: String
        var productId: String
        var storefront: String
        var currency: String
    }

    public init(from: Date, to: Date, smallBusiness: SmallBusinessProgram = SmallBusinessProgram()) {
        self.from = from
        self.to = to
        self.smallBusiness = smallBusiness
    }

    /// Adds everything known of one original transaction (any order; those outside `[from, to)` only inform).
    public mutating func add(history: [RevenueTransaction]) {
        let periods = history.compactMap { transaction -> (start: Date, end: Date, paid: Bool)? in
            guard transaction.kind == .autoRenewable, let end = transaction.expiresDate, transaction.commerce.revocationType == nil else {
                return nil
            }
            let paid = (transaction.commerce.price ?? 0) > 0 && transaction.commerce.offerDiscountType != "FREE_TRIAL"
            return (transaction.purchaseDate, end, paid)
        }
        for transaction in history where transaction.purchaseDate >= from && transaction.purchaseDate < to {
            let paidService =
                transaction.kind == .autoRenewable ? Proceeds.paidService(before: transaction.purchaseDate, periods: periods) : 0
            guard
                let estimate = Proceeds.estimate(
                    price: transaction.commerce.price,
                    currency: transaction.commerce.currency,
                    storefront: transaction.commerce.storefront,
                    sandbox: transaction.sandbox,
                    kind: transaction.kind,
                    purchaseDate: transaction.purchaseDate,
                    ownershipType: transaction.commerce.ownershipType,
                    revocationType: transaction.commerce.revocationType,
                    revocationPercentage: transaction.commerce.revocationPercentage,
                    paidServiceBefore: paidService,
                    smallBusiness: smallBusiness,
                    store: transaction.store,
                    storeFeePermille: transaction.commerce.storeFeePermille
                )?.refunding(seats: transaction.commerce.refundedSeats, of: transaction.quantity)
            else {
                skipped += 1
                continue
            }
            let key = LineKey(
                day: Self.day(transaction.purchaseDate),
                productId: transaction.productId,
                storefront: transaction.commerce.storefront ?? "",
                currency: estimate.currency
            )
            var line =
                lines[key]
                ?? RevenueLine(
                    day: key.day,
                    productId: key.productId,
                    storefront: key.storefront,
                    currency: key.currency,
                    units: 0,
                    gross: 0,
                    tax: 0,
                    proceeds: 0,
                    refunds: 0,
                    refundedProceeds: 0,
                    net: 0,
                    exact: true
                )
            // Each amount is at most Proceeds.maxPrice (10^13): sums of fewer than 900,000 of them cannot overflow, and
            // a line past that saturates rather than trapping.
            if estimate.customerPrice == 0 {
                line.freeUnits = line.freeUnits.addingSaturating(max(transaction.quantity, 1))
            } else {
                line.units = line.units.addingSaturating(max(transaction.quantity, 1))
            }
            line.gross = line.gross.addingSaturating(estimate.customerPrice)
            line.tax = line.tax.addingSaturating(estimate.tax)
            line.proceeds = line.proceeds.addingSaturating(estimate.proceeds)
            line.refunds = line.refunds.addingSaturating(estimate.refundedPrice)
            line.refundedProceeds = line.refundedProceeds.addingSaturating(estimate.refundedProceeds)
            line.net = line.net.addingSaturating(estimate.netProceeds)
            line.exact = line.exact && estimate.exact
            lines[key] = line
        }
    }

    /// The lines, by day, product, storefront and currency.
    public var report: [RevenueLine] {
        lines.values.sorted { ($0.day, $0.productId, $0.storefront, $0.currency) < ($1.day, $1.productId, $1.storefront, $1.currency) }
    }

    /// `YYYY-MM-DD` of `date` in UTC.
    public static func day(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return String(format: "%04lld-%02lld-%02lld", year, month, day)
    }
}

extension FixedWidthInteger {
    /// `self + other`, held at the type's bounds instead of trapping.
    func addingSaturating(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }
}
