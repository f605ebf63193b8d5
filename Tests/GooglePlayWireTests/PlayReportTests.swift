import Foundation
import GooglePlayWire
import Testing

/// Google Play's earnings reports as files: the CSV (quoting, encodings, amounts), the ZIP it comes in, and what a
/// damaged or hostile file gets.
@Suite("Google Play earnings reports")
struct PlayReportTests {
    static let header = PlayEarningsReport.columns.joined(separator: ",")

    @Test("a report Google wrote reads back line for line, quoted titles and all")
    func roundTrip() throws {
        let rows = [
            PlayEarningsReport.Row(
                orderId: "GPA.3371-2291-1122-33445",
                date: "2026-10-03",
                time: "4:05:06 AM PDT",
                type: .charge,
                productTitle: "100 coins, \"best value\" (Storekeeper)",
                packageName: "com.storekeeper.demo",
                productType: 1,
                sku: "coins_100",
                buyerCountry: "DE",
                buyerCurrency: "EUR",
                buyerAmount: 1_190,
                merchantCurrency: "USD",
                merchantAmount: 1_283,
                firstMillionEligible: true
            ),
            PlayEarningsReport.Row(
                orderId: "GPA.3371-2291-1122-33445",
                date: "2026-10-03",
                type: .googleFee,
                packageName: "com.storekeeper.demo",
                sku: "coins_100",
                buyerCountry: "DE",
                buyerCurrency: "EUR",
                buyerAmount: -179,
                merchantCurrency: "USD",
                merchantAmount: -193
            ),
        ]
        let csv = PlayEarningsReport(rows: rows).csv()
        #expect(String(decoding: csv, as: UTF8.self).contains("Oct 3, 2026"), "Google's own date format")
        #expect(try PlayEarningsReport(csv: csv).rows == rows)
    }

    @Test("columns are found by name, in any order, with a byte-order mark or in UTF-16")
    func columnsAndEncodings() throws {
        let text =
            "\u{FEFF}Sku Id,Amount (Buyer Currency),Buyer Currency,Description,Transaction Type,Transaction Date,Product id,Extra\r\n"
            + "vip_monthly,4.99,usd,GPA.1..0,Charge,\"Nov 30, 2026\",com.storekeeper.demo,x\r\n"
        let utf8 = try PlayEarningsReport(csv: Array(text.utf8))
        #expect(utf8.rows.count == 1)
        let row = try #require(utf8.rows.first)
        #expect(row.sku == "vip_monthly" && row.buyerAmount == 4_990 && row.buyerCurrency == "USD" && row.date == "2026-11-30")
        #expect(row.merchantAmount == 4_990 && row.type == .charge && row.orderId == "GPA.1..0")
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in text.dropFirst().utf16 { utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        #expect(try PlayEarningsReport(csv: utf16).rows == utf8.rows)
    }

    @Test("amounts are exact to the milliunit and bounded")
    func amounts() {
        #expect(PlayEarningsReport.milliunits("4.99") == 4_990)
        #expect(PlayEarningsReport.milliunits("-0.75") == -750)
        #expect(PlayEarningsReport.milliunits("1,234.5") == 1_234_500)
        #expect(PlayEarningsReport.milliunits("0.0004") == 0)
        #expect(PlayEarningsReport.milliunits("0.0005") == 1, "half a milliunit rounds away from zero")
        #expect(PlayEarningsReport.milliunits("-2.1235") == -2_124)
        #expect(PlayEarningsReport.milliunits("12") == 12_000)
        for bad in ["", "-", ".", "1.2.3", "1e3", "0x10", "NaN", "99999999999999", "1.0000000000000"] {
            #expect(PlayEarningsReport.milliunits(bad) == nil, "\(bad)")
        }
        #expect(
            PlayEarningsReport.decimal(-1_990) == "-1.99" && PlayEarningsReport.decimal(1_283) == "1.283" && PlayEarningsReport.decimal(5) == "0.005"
        )
    }

    @Test("a damaged report is refused with the line that is wrong")
    func damaged() {
        func failure(_ text: String) -> String? {
            do {
                _ = try PlayEarningsReport(csv: Array(text.utf8))
                return nil
            } catch { return error.description }
        }
        #expect(failure("")?.contains("empty") == true)
        #expect(failure("Description,Transaction Date\r\nGPA.1,Oct 1, 2026\r\n")?.contains("no Transaction Type column") == true)
        let head = "Description,Transaction Date,Transaction Type,Product id,Sku Id,Buyer Currency,Amount (Buyer Currency)\r\n"
        #expect(failure(head + "GPA.1,Octember 1 2026,Charge,p.q,s,USD,1.00\r\n")?.contains("line 2: Transaction Date") == true)
        #expect(failure(head + "GPA.1,2026-10-01,Charge,p.q,s,USD,lots\r\n")?.contains("line 2: Amount") == true)
        #expect(failure(head + "\"GPA.1,2026-10-01,Charge,p.q,s,USD,1.00\r\n")?.contains("not closed") == true)
        #expect(failure(head + ",2026-10-01,Charge,p.q,s,USD,1.00\r\n")?.contains("Description") == true)
    }

    @Test("a ZIP archive reads back, and corruption, truncation and bombs are refused")
    func zip() throws {
        let csv = Array(String(repeating: "GPA.1,Oct 1, 2026,Charge\r\n", count: 2_000).utf8)
        let archive = ZipArchive.archive([.init(name: "earnings_202610_1.csv", bytes: csv), .init(name: "b.csv", bytes: [])])
        #expect(archive.count < csv.count / 10, "deflated")
        let entries = try ZipArchive.entries(archive, limit: 1 << 20)
        #expect(entries.map(\.name) == ["earnings_202610_1.csv", "b.csv"] && entries[0].bytes == csv && entries[1].bytes.isEmpty)

        #expect(throws: ZipArchive.Failure.tooLarge(limit: 1_000)) { try ZipArchive.entries(archive, limit: 1_000) }
        var corrupt = archive
        corrupt[60] ^= 0xFF
        #expect(throws: ZipArchive.Failure.self) { try ZipArchive.entries(corrupt, limit: 1 << 20) }
        for cut in [0, 10, archive.count / 2, archive.count - 1] {
            #expect(throws: ZipArchive.Failure.self) { try ZipArchive.entries(Array(archive.prefix(cut)), limit: 1 << 20) }
        }
        #expect(throws: ZipArchive.Failure.self) { try ZipArchive.entries(Array(repeating: 0x50, count: 5_000), limit: 1 << 20) }
    }
}
