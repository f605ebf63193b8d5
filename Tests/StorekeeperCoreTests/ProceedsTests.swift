import Foundation
import StorekeeperCore
import Testing

/// What a transaction earned: Apple's commission tiers, tax inside prices, refunds, sandbox and family sharing, and
/// the paid-service count that moves a subscription to 15 %.
@Suite("Proceeds estimates")
struct ProceedsTests {
    static let day: TimeInterval = 86_400
    static let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01

    static func estimate(
        _ price: Int64?,
        storefront: String? = "USA",
        sandbox: Bool = false,
        kind: ProductKind = .consumable,
        at date: Date = start,
        ownership: String? = nil,
        revocation: String? = nil,
        percentage: Int? = nil,
        paidService: TimeInterval = 0,
        smallBusiness: SmallBusinessProgram = SmallBusinessProgram()
    ) -> ProceedsEstimate? {
        Proceeds.estimate(
            price: price,
            currency: "USD",
            storefront: storefront,
            sandbox: sandbox,
            kind: kind,
            purchaseDate: date,
            ownershipType: ownership,
            revocationType: revocation,
            revocationPercentage: percentage,
            paidServiceBefore: paidService,
            smallBusiness: smallBusiness
        )
    }

    @Test func standardCommissionOnATaxExclusiveStorefrontIsExact() throws {
        let sale = try #require(Self.estimate(9990))
        #expect(sale.customerPrice == 9990 && sale.tax == 0)
        #expect(sale.commissionPermille == 300 && sale.reason == .standard)
        #expect(sale.proceeds == 6993)
        #expect(sale.netProceeds == 6993 && sale.exact)
    }

    @Test func smallBusinessProgramAppliesOnlyInsideItsPeriods() throws {
        let program = SmallBusinessProgram(periods: [.init(start: Self.start, end: Self.start + 30 * Self.day)])
        let inside = try #require(Self.estimate(9990, at: Self.start + Self.day, smallBusiness: program))
        #expect(inside.reason == .smallBusinessProgram && inside.proceeds == 8492)  // 9.99 · 0.85 = 8.4915
        let after = try #require(Self.estimate(9990, at: Self.start + 30 * Self.day, smallBusiness: program))
        #expect(after.reason == .standard && after.proceeds == 6993)
        let before = try #require(Self.estimate(9990, at: Self.start - 1, smallBusiness: program))
        #expect(before.reason == .standard)
        let open = SmallBusinessProgram(periods: [.init(start: Self.start)])
        #expect(Self.estimate(9990, at: Self.start + 900 * Self.day, smallBusiness: open)?.reason == .smallBusinessProgram)
    }

    @Test func aSubscriptionEarnsTheReducedRateAfterAYearOfPaidService() throws {
        let year = Proceeds.oneYearOfPaidService
        #expect(Self.estimate(9990, kind: .autoRenewable, paidService: year - 1)?.reason == .standard)
        let renewal = try #require(Self.estimate(9990, kind: .autoRenewable, paidService: year))
        #expect(renewal.reason == .subscriptionAfterOneYear && renewal.proceeds == 8492)
        // Only auto-renewable subscriptions: a year of anything else changes nothing.
        #expect(Self.estimate(9990, kind: .nonRenewing, paidService: 2 * year)?.reason == .standard)
    }

    @Test func taxInsideThePriceIsTakenOutFirstAndMarkedAnEstimate() throws {
        // 9.99 GBP includes 20 % VAT: 1.665 of tax, 8.325 net, 70 % of that is 5.8275.
        let sale = try #require(Self.estimate(9990, storefront: "GBR"))
        #expect(sale.tax == 1665)
        #expect(sale.proceeds == 5828)
        #expect(!sale.exact)
        // A storefront the table does not know: taken on the whole price, and an estimate.
        let unknown = try #require(Self.estimate(9990, storefront: "XYZ"))
        #expect(unknown.tax == 0 && unknown.proceeds == 6993 && !unknown.exact)
    }

    @Test func refundsTakeBackTheirShare() throws {
        let full = try #require(Self.estimate(9990, revocation: "REFUND_FULL"))
        #expect(full.refundedPrice == 9990 && full.netProceeds == 0 && full.netPrice == 0)
        // Prorated: Apple's percentage is in milliunits (25000 is a quarter).
        let quarter = try #require(Self.estimate(9990, revocation: "REFUND_PRORATED", percentage: 25_000))
        #expect(quarter.refundedPrice == 2498)  // 2.4975 rounds half up
        #expect(quarter.refundedProceeds == 1748)  // 6.993 / 4 = 1.74825
        #expect(quarter.netProceeds == 6993 - 1748)
        // A family member losing access is not money back.
        #expect(Self.estimate(9990, revocation: "FAMILY_REVOKE")?.refundedPrice == 0)
        // A percentage out of range is clamped, never more than the price.
        #expect(Self.estimate(9990, revocation: "REFUND_PRORATED", percentage: 400_000)?.refundedPrice == 9990)
    }

    @Test func whatIsNotRevenueIsNotEstimated() {
        #expect(Self.estimate(9990, sandbox: true) == nil, "sandbox never counts as revenue")
        #expect(Self.estimate(9990, ownership: "FAMILY_SHARED") == nil, "the organiser's transaction carries it")
        #expect(Self.estimate(9990, ownership: "ASSIGNED") == nil, "the organization that assigned it bought it")
        #expect(Self.estimate(9990, ownership: "PURCHASED") != nil)
        #expect(TransactionCommerce.isSale(ownershipType: nil) && !TransactionCommerce(ownershipType: "ASSIGNED").isSale)
        #expect(Self.estimate(nil) == nil, "a legacy receipt has no price")
        #expect(Self.estimate(-1) == nil)
        #expect(Self.estimate(Proceeds.maxPrice + 1) == nil)
        #expect(Self.estimate(Int64.max) == nil, "no overflow")
        #expect(Self.estimate(Proceeds.maxPrice, storefront: "SWE", revocation: "REFUND_PRORATED", percentage: 99_999) != nil)
        #expect(Self.estimate(0)?.proceeds == 0, "a free trial earns nothing")
    }

    @Test func paidServiceCountsPaidDaysThroughShortLapsesOnly() {
        let day = Self.day
        let start = Self.start
        func month(_ index: Int, paid: Bool = true) -> (start: Date, end: Date, paid: Bool) {
            (start + Double(index) * 30 * day, start + Double(index + 1) * 30 * day, paid)
        }
        // Twelve months and a week's trial before them: the trial is not paid service.
        let trial = (start: start - 7 * day, end: start, paid: false)
        let months = (0..<12).map { month($0) }
        #expect(Proceeds.paidService(before: start + 360 * day, periods: [trial] + months) == 360 * day)
        // A 59-day lapse keeps the count; the days of the lapse are not paid service.
        let kept = [month(0), month(1)] + [(start + 119 * day, start + 149 * day, true)]
        #expect(Proceeds.paidService(before: start + 149 * day, periods: kept) == 90 * day)
        // A 61-day lapse starts over.
        let reset = [month(0), month(1)] + [(start + 121 * day, start + 151 * day, true)]
        #expect(Proceeds.paidService(before: start + 151 * day, periods: reset) == 30 * day)
        // Lapsed more than 60 days at the moment asked: nothing carries into a new subscription.
        #expect(Proceeds.paidService(before: start + 200 * day, periods: [month(0)]) == 0)
        // Overlapping periods (an upgrade mid-period) count once; periods after the moment not at all.
        let overlap = [month(0), (start + 10 * day, start + 40 * day, true), month(5)]
        #expect(Proceeds.paidService(before: start + 40 * day, periods: overlap) == 40 * day)
    }
}

/// The revenue report's lines: booked by purchase day, a subscription's commission from its whole history, what is
/// not revenue left out and counted.
@Suite("Revenue report")
struct RevenueReportTests {
    static let day: TimeInterval = 86_400
    static let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01

    static func transaction(
        _ id: String,
        original: String? = nil,
        product: String = "coins",
        kind: ProductKind = .consumable,
        at date: Date,
        days: Double? = nil,
        price: Int64 = 990,
        storefront: String = "USA",
        sandbox: Bool = false,
        refunded: Bool = false,
        quantity: Int = 1
    ) -> RevenueTransaction {
        RevenueTransaction(
            transactionId: id,
            originalTransactionId: original ?? id,
            productId: product,
            kind: kind,
            purchaseDate: date,
            expiresDate: days.map { date + $0 * Self.day },
            quantity: quantity,
            sandbox: sandbox,
            commerce: TransactionCommerce(
                price: price,
                currency: storefront == "USA" ? "USD" : "EUR",
                storefront: storefront,
                revocationType: refunded ? "REFUND_FULL" : nil
            )
        )
    }

    @Test func daysAreUTCCalendarDays() {
        #expect(RevenueReportBuilder.day(Date(timeIntervalSince1970: 0)) == "1970-01-01")
        #expect(RevenueReportBuilder.day(Date(timeIntervalSince1970: -1)) == "1969-12-31")
        #expect(RevenueReportBuilder.day(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29")
        #expect(RevenueReportBuilder.day(Self.start + Self.day - 0.001) == "2026-01-01")
        #expect(RevenueReportBuilder.day(Date(timeIntervalSince1970: 7_258_118_399)) == "2199-12-31")
    }

    @Test func linesByDayProductStorefrontAndCurrency() {
        var builder = RevenueReportBuilder(from: Self.start, to: Self.start + 2 * Self.day)
        builder.add(history: [Self.transaction("a", at: Self.start + 60)])
        builder.add(history: [Self.transaction("b", at: Self.start + 120, quantity: 3)])
        builder.add(history: [Self.transaction("c", at: Self.start + Self.day + 1, storefront: "DEU")])
        builder.add(history: [Self.transaction("d", at: Self.start + 3 * Self.day)])  // after the range
        builder.add(history: [Self.transaction("e", at: Self.start + 5, sandbox: true)])
        builder.add(history: [Self.transaction("f", at: Self.start + 9, refunded: true)])
        let lines = builder.report
        #expect(lines.map(\.day) == ["2026-01-01", "2026-01-02"])
        let first = lines[0]
        #expect(first.units == 5 && first.gross == 2970 && first.proceeds == 3 * 693)
        #expect(first.refunds == 990 && first.net == 2 * 693 && first.exact)
        let second = lines[1]
        #expect(second.currency == "EUR" && second.storefront == "DEU" && !second.exact)
        #expect(second.tax == 158)  // 990 · 190 / 1190 = 158.07
        #expect(builder.skipped == 1, "the sandbox purchase")
    }

    @Test func aRenewalInRangeEarnsTheReducedRateFromHistoryBeforeIt() {
        let from = Self.start + 400 * Self.day
        var builder = RevenueReportBuilder(from: from, to: from + Self.day)
        let history = (0..<14).map { month in
            Self.transaction(
                "s\(month)",
                original: "s0",
                product: "monthly",
                kind: .autoRenewable,
                at: Self.start + Double(month) * 30 * Self.day,
                days: 30
            )
        }
        let renewal = Self.transaction("s14", original: "s0", product: "monthly", kind: .autoRenewable, at: from + 60, days: 30)
        builder.add(history: history + [renewal])
        let line = builder.report.first
        #expect(builder.report.count == 1)
        // 14 months of 30 days end on day 420, after the renewal began: 400 days of paid service before it.
        #expect(line?.proceeds == 842, "85 % of 990")
    }
}
