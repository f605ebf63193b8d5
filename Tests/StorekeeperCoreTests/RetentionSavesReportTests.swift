import Foundation
import StorekeeperCore
import Testing

/// What retention offers kept: renewals at a retention offer summed per product, offer, rule and currency; a
/// subscription counts once as saved however many of its renewals took the offer; sandbox and transactions that are
/// not the customer's sale are left out.
@Suite struct RetentionSavesReportTests {
    static func renewal(
        _ id: String,
        original: String,
        offer: String = "stay-50",
        price: Int64 = 4990,
        sandbox: Bool = false,
        ownership: String? = "PURCHASED"
    ) -> RevenueTransaction {
        RevenueTransaction(
            transactionId: id,
            originalTransactionId: original,
            productId: "monthly",
            kind: .autoRenewable,
            purchaseDate: Date(timeIntervalSince1970: 1_790_000_000),
            expiresDate: nil,
            quantity: 1,
            sandbox: sandbox,
            commerce: TransactionCommerce(price: price, currency: "USD", storefront: "USA", offerId: offer, ownershipType: ownership)
        )
    }

    @Test func savesCountSubscriptionsAndRenewalsCountPayments() {
        var report = RetentionSavesReport()
        report.add(Self.renewal("t1", original: "o1"), ruleId: "loyal")
        report.add(Self.renewal("t2", original: "o1"), ruleId: "loyal")
        report.add(Self.renewal("t3", original: "o2"), ruleId: "loyal")
        report.add(Self.renewal("t4", original: "o3"), ruleId: nil)
        report.add(Self.renewal("t5", original: "o4", sandbox: true), ruleId: "loyal")
        report.add(Self.renewal("t6", original: "o5", ownership: "ASSIGNED"), ruleId: "loyal")
        let lines = report.report
        #expect(lines.count == 2)
        let byRule = lines.first { $0.ruleId == "loyal" }
        #expect(byRule?.saves == 2 && byRule?.renewals == 3 && byRule?.gross == 3 * 4990)
        let proceeds: Int64 = 3 * ((4990 * 700 + 500) / 1000)
        #expect(byRule?.proceeds == proceeds)
        let unattributed = lines.first { $0.ruleId == nil }
        #expect(unattributed?.saves == 1 && unattributed?.renewals == 1)
    }
}
