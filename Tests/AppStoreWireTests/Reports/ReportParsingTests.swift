import AppStoreWire
import Foundation
import Testing

/// App Store Connect's report files: amounts, gzip, tables read by column name, countries.
@Suite("Report parsing")
struct ReportParsingTests {
    @Test("amounts become milliunits exactly; anything else is refused")
    func money() {
        #expect(ReportMoney.milliunits("6.99") == 6_990)
        #expect(ReportMoney.milliunits("-0.7") == -700)
        #expect(ReportMoney.milliunits("12") == 12_000)
        #expect(ReportMoney.milliunits(" 0.6935 ") == 694, "the fourth decimal rounds half away from zero")
        #expect(ReportMoney.milliunits("-0.6935") == -694)
        #expect(ReportMoney.milliunits(".5") == 500)
        for bad in ["", "-", ".", "1.2.3", "1,99", "abc", "1e3", "99999999999999999999", "--1"] {
            #expect(ReportMoney.milliunits(bad) == nil, "\(bad)")
        }
        #expect(ReportMoney.text(6_990) == "6.99")
        #expect(ReportMoney.text(-700) == "-0.70")
        #expect(ReportMoney.text(693) == "0.693")
        #expect(ReportMoney.text(5) == "0.005")
        for value: Int64 in [0, 1, 10, 990, -1_234_567, 1_000_000_001] {
            #expect(ReportMoney.milliunits(ReportMoney.text(value)) == value)
        }
    }

    @Test("gzip: round trip, several members, and clear failures for cut, garbage and bombs")
    func gzip() throws {
        let text = Array(String(repeating: "SKU\tUnits\n", count: 10_000).utf8)
        let packed = Gzip.compress(text)
        #expect(packed.count < text.count / 10)
        #expect(try Gzip.decompress(packed, limit: 1 << 20) == text)
        #expect(try Gzip.decompress(Gzip.compress(Array("a".utf8)) + Gzip.compress(Array("b".utf8)), limit: 10) == Array("ab".utf8))
        #expect(throws: Gzip.Failure.self) { try Gzip.decompress(Array(packed.prefix(packed.count / 2)), limit: 1 << 20) }
        #expect(throws: Gzip.Failure.self) { try Gzip.decompress(Array("<html>".utf8), limit: 1 << 20) }
        #expect(throws: Gzip.Failure.self) { try Gzip.decompress([], limit: 1 << 20) }
        #expect(throws: Gzip.Failure.tooLarge(limit: 1_000)) { try Gzip.decompress(packed, limit: 1_000) }
    }

    @Test("columns are found by name, in any order, with columns Storekeeper does not know")
    func salesByName() throws {
        let text =
            "\u{FEFF}Units\tNew Column\tSKU\tProduct Type Identifier\tDeveloper Proceeds\tCustomer Price\tCustomer Currency\t"
            + "Country Code\tCurrency of Proceeds\tBegin Date\tEnd Date\r\n"
            + "3\tx\tcom.example.coins\tIA1\t0.69\t0.99\tUSD\tUS\tUSD\t11/02/2026\t11/02/2026\r\n"
            + "-1\ty\tcom.example.coins\tIA1\t0.69\t-0.99\tUSD\tUS\tUSD\t11/02/2026\t11/02/2026\r\n"
        let rows = try SalesReportRow.rows(of: try ReportTable(tsv: text))
        #expect(rows.count == 2)
        #expect(rows[0].units == 3 && rows[0].developerProceeds == 690 && rows[0].customerPrice == 990 && rows[0].isInAppPurchase)
        #expect(rows[1].units == -1 && rows[1].customerPrice == -990)
        #expect(rows[0].proceedsReason == nil)

        let missing = "SKU\tUnits\nx\t1\n"
        #expect(throws: ReportTable.Failure("the report has no Product Type Identifier column")) {
            try SalesReportRow.rows(of: try ReportTable(tsv: missing))
        }
        #expect(throws: ReportTable.Failure("line 3 has 1 fields, the header names 2")) { try ReportTable(tsv: "SKU\tUnits\nx\t1\ny\n") }
        #expect(throws: ReportTable.Failure.self) { try ReportTable(tsv: "") }
        let badUnits = text.replacingOccurrences(of: "\r\n3\t", with: "\r\nthree\t")
        #expect(throws: ReportTable.Failure("row 1: Units \"three\" is not a count")) { try SalesReportRow.rows(of: try ReportTable(tsv: badUnits)) }
    }

    @Test("a written sales report reads back the same")
    func salesRoundTrip() throws {
        let row = SalesReportRow(
            sku: "com.example.monthly",
            productTypeIdentifier: "IAY",
            units: 7,
            developerProceeds: 4_190,
            customerPrice: 5_990,
            customerCurrency: "USD",
            countryCode: "US",
            proceedsCurrency: "USD",
            beginDate: "11/02/2026",
            endDate: "11/02/2026",
            subscription: "Renewal",
            proceedsReason: "Rate After One Year"
        )
        let table = try ReportTable(tsv: ReportTable.tsv(columns: SalesReportRow.columns, rows: [row.fields]))
        let read = try #require(try SalesReportRow.rows(of: table).first)
        #expect(read.units == 7 && read.developerProceeds == 4_190 && read.customerPrice == 5_990)
        #expect(read.subscription == "Renewal" && read.proceedsReason == "Rate After One Year" && read.countryCode == "US")
    }

    @Test("finance reports: rows up to the blank line, totals kept apart, either spelling of Sales or Return")
    func finance() throws {
        let row = FinanceReportRow(
            startDate: "11/01/2026",
            endDate: "11/30/2026",
            vendorIdentifier: "com.example.coins",
            quantity: 12,
            partnerShare: 690,
            extendedPartnerShare: 8_280,
            partnerShareCurrency: "USD",
            saleOrReturn: "S",
            productTypeIdentifier: "IA1",
            countryOfSale: "US",
            customerPrice: 990,
            customerCurrency: "USD"
        )
        let text = ReportTable.tsv(columns: FinanceReportRow.columns, rows: [row.fields], trailer: ["Total_Rows\t1", "Total_Amount\t8.28"])
        let table = try ReportTable(tsv: text)
        #expect(table.trailer == ["Total_Rows\t1", "Total_Amount\t8.28"])
        #expect(try FinanceReportRow.rows(of: table) == [row])
        let older = try ReportTable(tsv: text.replacingOccurrences(of: "Sales or Return", with: "Sale or Return"))
        #expect(try FinanceReportRow.rows(of: older).first?.saleOrReturn == "S")
    }

    @Test("storefront countries: alpha-3 to alpha-2 and back")
    func countries() {
        #expect(StorefrontCountry.alpha2("USA") == "US")
        #expect(StorefrontCountry.alpha2("chn") == "CN")
        #expect(StorefrontCountry.alpha2("GBR") == "GB")
        #expect(StorefrontCountry.alpha3("DE") == "DEU")
        #expect(StorefrontCountry.alpha2("XYZ") == nil)
    }
}

/// Apple's subscription reports, read by column name regardless of case.
@Suite("Subscription report parsing")
struct SubscriptionReportParsingTests {
    @Test("a subscription report: counts by offer, columns a version lacks read as 0, another case of a name still found")
    func subscriptionReport() throws {
        let text =
            "App Name\tApp Apple ID\tSubscription Name\tSubscription Apple ID\tCustomer Price\tCustomer Currency\tDeveloper Proceeds\t"
            + "Proceeds Currency\tCountry\tActive Standard Price Subscriptions\tActive Free Trial Introductory Offer Subscriptions\t"
            + "Active Pay as You Go Introductory Offer Subscriptions\tBilling Retry\tGrace Period\tA Column From Later\n"
            + "Example\t1234\tMonthly\t6400000001\t9.99\tUSD\t6.99\tUSD\tUS\t12\t3\t2\t1\t4\tx\n"
        let rows = try SubscriptionReportRow.rows(of: try ReportTable(tsv: text))
        #expect(rows.count == 1)
        let row = try #require(rows.first)
        #expect(row.subscriptionName == "Monthly" && row.subscriptionAppleId == "6400000001" && row.country == "US")
        #expect(row.customerPrice == 9_990 && row.developerProceeds == 6_990)
        #expect(row.activeStandardPrice == 12 && row.activeInOffer == 5 && row.activePayAsYouGoIntroductory == 2)
        #expect(row.billingRetry == 1 && row.gracePeriod == 4 && row.freeTrialWinBack == 0)
        // Written in the 1_3 layout and read back the same.
        let again = try SubscriptionReportRow.rows(
            of: try ReportTable(tsv: ReportTable.tsv(columns: SubscriptionReportRow.columns, rows: [row.fields]))
        )
        #expect(again == rows)
        for bad in ["-1", "many", "99999999999"] {
            let broken = text.replacingOccurrences(of: "\tUS\t12\t", with: "\tUS\t\(bad)\t")
            #expect(throws: ReportTable.Failure.self) { try SubscriptionReportRow.rows(of: try ReportTable(tsv: broken)) }
        }
        #expect(throws: ReportTable.Failure.self) {
            try SubscriptionReportRow.rows(of: try ReportTable(tsv: "App Name\tSubscription Name\nx\ty\n"))
        }
    }

    @Test("a subscription event report: quantities, both date forms, and Apple's event names in groups")
    func eventReport() throws {
        let header = "Event Date\tEvent\tApp Name\tSubscription Name\tSubscription Apple ID\tCountry\tQuantity\n"
        let text =
            header + "2026-01-05\tRenew\tExample\tMonthly\t6400000001\tUS\t7\n"
            + "01/05/2026\tStart Introductory Offer\tExample\tMonthly\t6400000001\tFR\t2\n"
        let rows = try SubscriptionEventReportRow.rows(of: try ReportTable(tsv: text))
        #expect(rows.map(\.quantity) == [7, 2] && rows.map(\.eventDate) == ["2026-01-05", "2026-01-05"])
        let groups: [String: SubscriptionEventReportRow.Group?] = [
            "Subscribe": .start, "Start Introductory Offer": .start, "Start Introductory Price": .start, "Start Offer Code": .start,
            "Opt-In": .start, "Renew": .continuation, "Paid Subscription from Introductory Offer": .continuation,
            "Renewal from Billing Retry": .continuation, "Reactivate with Upgrade": .continuation, "Upgrade": .continuation,
            "Crossgrade From Introductory Offer": .continuation, "Cancel": .end, "Canceled from Billing Retry": .end,
            "Cancelled from Billing Retry": .end, "Billing Retry from Paid Subscription": .billingRetry, "Refund": .refund,
            "Something New": nil,
        ]
        for (event, group) in groups { #expect(SubscriptionEventReportRow.group(of: event) == group, "\(event)") }
        for bad in ["2026-13-05\tRenew", "5 Jan 2026\tRenew"] {
            let broken = header + "\(bad)\tExample\tMonthly\t1\tUS\t1\n"
            #expect(throws: ReportTable.Failure.self) { try SubscriptionEventReportRow.rows(of: try ReportTable(tsv: broken)) }
        }
        #expect(throws: ReportTable.Failure.self) {
            try SubscriptionEventReportRow.rows(of: try ReportTable(tsv: header + "2026-01-05\tRenew\tExample\tMonthly\t1\tUS\t-3\n"))
        }
    }
}
