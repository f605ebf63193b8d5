import AppStoreWire
import Foundation

/// App Store Connect's Sales and Trends and Finance reports, written from the simulator's own record of what it sold
/// (reference §11): production purchases only, a day's report only once the day is over, refunds as negative units on
/// the day Apple refunded, family members' shared copies and free periods left out, proceeds after the tax inside the
/// storefront's prices and Apple's commission (30 %, 15 % for a subscription past a year of paid service).
extension SimulatedAppStore {
    /// What App Store Connect answers for a report.
    public enum ReportAnswer: Sendable, Hashable {
        /// The report, as tab-separated text (gzipped on the wire).
        case report(String)
        /// The period is not over, or the report is late.
        case notYetAvailable
        /// Nothing was sold in the period.
        case noSales
    }

    /// A daily Summary Sales Report for `day` (`YYYY-MM-DD`, a Pacific Time day as Apple cuts them), available
    /// `delayHours` after the day ends.
    public func dailySalesReport(day: String, delayHours: Int = 0) throws -> ReportAnswer {
        guard let day = ReportCalendar.Day(day) else { throw SimulatorError.notAllowed("reportDate must be YYYY-MM-DD") }
        let interval = reportCalendar.interval(of: day)
        guard now >= interval.end.addingTimeInterval(Double(delayHours) * 3_600) else { return .notYetAvailable }
        let lines = salesLines(from: interval.start, to: interval.end, first: day, last: day)
        guard !lines.isEmpty else { return .noSales }
        return .report(ReportTable.tsv(columns: SalesReportRow.columns, rows: lines.map(\.fields)))
    }

    /// A Financial Report for Apple's fiscal month `month` (`YYYY-MM`: Sunday to Saturday, 5-4-4 weeks a quarter).
    public func financeReport(month: String, delayHours: Int = 0) throws -> ReportAnswer {
        guard let fiscal = ReportCalendar.fiscalMonth(month) else { throw SimulatorError.notAllowed("reportDate must be YYYY-MM") }
        let interval = reportCalendar.interval(of: fiscal)
        let (start, end) = (interval.start, interval.end)
        guard now >= end.addingTimeInterval(Double(delayHours) * 3_600) else { return .notYetAvailable }
        var totals: [FinanceKey: (quantity: Int, extended: Int64)] = [:]
        for line in salesLines(from: start, to: end, first: fiscal.first, last: fiscal.last) {
            let key = FinanceKey(
                sku: line.sku,
                type: line.productTypeIdentifier,
                country: line.countryCode,
                currency: line.proceedsCurrency,
                share: line.developerProceeds,
                price: line.customerPrice.magnitude,
                customerCurrency: line.customerCurrency,
                sale: line.units >= 0
            )
            let current = totals[key] ?? (0, 0)
            totals[key] = (current.quantity + line.units, current.extended + Int64(line.units) * line.developerProceeds)
        }
        guard !totals.isEmpty else { return .noSales }
        let first = fiscal.first.reportText
        let last = fiscal.last.reportText
        let rows = totals.sorted { $0.key < $1.key }.map { key, total in
            FinanceReportRow(
                startDate: first,
                endDate: last,
                vendorIdentifier: key.sku,
                quantity: total.quantity,
                partnerShare: key.share,
                extendedPartnerShare: total.extended,
                partnerShareCurrency: key.currency,
                saleOrReturn: key.sale ? "S" : "R",
                productTypeIdentifier: key.type,
                countryOfSale: key.country,
                customerPrice: Int64(key.price),
                customerCurrency: key.customerCurrency
            ).fields
        }
        let units = totals.values.reduce(0) { $0 + $1.quantity }
        let amount = totals.values.reduce(Int64(0)) { $0 + $1.extended }
        return .report(
            ReportTable.tsv(
                columns: FinanceReportRow.columns,
                rows: rows,
                trailer: ["Total_Rows\t\(rows.count)", "Total_Amount\t\(ReportMoney.text(amount))", "Total_Units\t\(units)"]
            )
        )
    }

    private struct SalesKey: Hashable, Comparable {
        var sku: String
        var type: String
        var country: String
        var currency: String
        var proceedsCurrency: String
        var price: Int64
        var proceeds: Int64
        var refund: Bool
        var subscription: String
        var reason: String

        static func < (a: Self, b: Self) -> Bool {
            (a.sku, a.country, a.currency, a.price, a.refund ? 1 : 0, a.subscription) < (
                b.sku, b.country, b.currency, b.price, b.refund ? 1 : 0, b.subscription
            )
        }
    }

    private struct FinanceKey: Hashable, Comparable {
        var sku: String
        var type: String
        var country: String
        var currency: String
        var share: Int64
        var price: UInt64
        var customerCurrency: String
        var sale: Bool

        static func < (a: Self, b: Self) -> Bool {
            (a.sku, a.country, a.share, a.sale ? 0 : 1) < (b.sku, b.country, b.share, b.sale ? 0 : 1)
        }
    }

    /// The summary lines for purchases and refunds in `[start, end)`, the days `first` to `last`.
    private func salesLines(from start: Date, to end: Date, first firstDay: ReportCalendar.Day, last lastDay: ReportCalendar.Day) -> [SalesReportRow]
    {
        // Apple's reports are production sales; the sandbox sells nothing.
        guard environment == .production else { return [] }
        var units: [SalesKey: Int] = [:]
        for transaction in transactions.values where transaction.inAppOwnershipType != .familyShared {
            guard let productId = transaction.productId, let product = catalog.product(productId),
                let price = transaction.price, price > 0, let currency = transaction.currency,
                let storefront = transaction.storefront, let country = StorefrontCountry.alpha2(storefront)
            else { continue }
            let quantity = Int(transaction.quantity ?? 1)
            let perUnit = price / Int64(max(quantity, 1))
            let tax = catalog.storefronts.first { $0.code == storefront }?.taxPermille ?? 0
            let afterOneYear = product.kind == .autoRenewable && paidServiceDays(before: transaction) >= 365
            let smallBusiness = transaction.purchaseDate.map { catalog.inSmallBusinessProgram(at: $0) } ?? false
            let proceeds = Self.proceeds(price: perUnit, taxPermille: tax, afterOneYear: afterOneYear || smallBusiness)
            let type =
                switch product.kind {
                case .consumable, .nonConsumable: "IA1"
                case .nonRenewing: "IA9"
                case .autoRenewable: "IAY"
                }
            let subscription =
                product.kind == .autoRenewable ? (transaction.transactionId == transaction.originalTransactionId ? "New" : "Renewal") : ""
            if let purchased = transaction.purchaseDate, purchased >= start, purchased < end {
                let key = SalesKey(
                    sku: productId,
                    type: type,
                    country: country,
                    currency: currency,
                    proceedsCurrency: currency,
                    price: perUnit,
                    proceeds: proceeds,
                    refund: false,
                    subscription: subscription,
                    reason: afterOneYear ? "Rate After One Year" : ""
                )
                units[key, default: 0] += quantity
            }
            // An upgrade's revocation is Apple's credit toward the new product, not a refund.
            if let revoked = transaction.revocationDate, revoked >= start, revoked < end, transaction.isUpgraded != true,
                transaction.revocationType != .familyRevoke
            {
                var refunded = perUnit
                if transaction.revocationType == .refundProrated, let share = transaction.revocationPercentage {
                    refunded = perUnit * Int64(min(max(share, 0), 100_000)) / 100_000
                }
                let key = SalesKey(
                    sku: productId,
                    type: type,
                    country: country,
                    currency: currency,
                    proceedsCurrency: currency,
                    price: -refunded,
                    proceeds: -Self.proceeds(price: refunded, taxPermille: tax, afterOneYear: afterOneYear || smallBusiness),
                    refund: true,
                    subscription: subscription,
                    reason: afterOneYear ? "Rate After One Year" : ""
                )
                units[key, default: 0] -= quantity
            }
        }
        let first = firstDay.reportText
        let last = lastDay.reportText
        return units.sorted { $0.key < $1.key }.map { key, count in
            SalesReportRow(
                sku: key.sku,
                title: catalog.product(key.sku)?.id,
                productTypeIdentifier: key.type,
                units: count,
                developerProceeds: abs(key.proceeds),
                customerPrice: key.price,
                customerCurrency: key.currency,
                countryCode: key.country,
                proceedsCurrency: key.proceedsCurrency,
                beginDate: first,
                endDate: last,
                appleIdentifier: nil,
                parentIdentifier: catalog.bundleId,
                subscription: key.subscription.isEmpty ? nil : key.subscription,
                period: nil,
                proceedsReason: key.reason.isEmpty ? nil : key.reason
            )
        }
    }

    /// Proceeds of one unit, in milliunits rounded to the cent as Apple's reports show them: the tax inside the price
    /// out, then Apple's 30 % (15 % after a year of paid service, or in the Small Business Program).
    static func proceeds(price: Int64, taxPermille: Int, afterOneYear: Bool) -> Int64 {
        let net = taxPermille > 0 ? (price * 1_000 + Int64(500 + taxPermille / 2)) / Int64(1_000 + taxPermille) : price
        let share: Int64 = afterOneYear ? 850 : 700
        let milli = (net * share + 500) / 1_000
        return (milli + 5) / 10 * 10
    }

    /// Days of paid service on `transaction`'s subscription before it (earlier paid periods of the same original).
    func paidServiceDays(before transaction: JWSTransactionDecodedPayload) -> Int {
        guard let original = transaction.originalTransactionId, let purchased = transaction.purchaseDate else { return 0 }
        var seconds: TimeInterval = 0
        for earlier in transactions.values where earlier.originalTransactionId == original {
            guard let start = earlier.purchaseDate, start < purchased, let end = earlier.expiresDate, (earlier.price ?? 0) > 0 else { continue }
            seconds += min(end, purchased).timeIntervalSince(start)
        }
        return Int(seconds / 86_400)
    }
}
