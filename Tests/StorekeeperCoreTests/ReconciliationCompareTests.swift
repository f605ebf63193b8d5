import Foundation
import StorekeeperCore
import Testing

/// ``Reconciliation/compare(apple:storekeeper:)``: which disagreements become which findings.
@Suite("Reconciliation: comparing the two sides")
struct ReconciliationCompareTests {
    static let key = Reconciliation.Key(day: "2026-11-02", productId: "coins", storefront: "USA", currency: "USD")

    static func side(_ units: Int64, price: Int64 = 990, proceeds: Int64 = 690, refunds: Int64 = 0, ids: [String] = []) -> Reconciliation.Side {
        var side = Reconciliation.Side()
        if units > 0 {
            side.purchases[key] = .init(units: units, customerPrice: units * price, proceeds: units * proceeds, transactionIds: ids)
        }
        if refunds > 0 { side.refunds[key] = .init(units: refunds, customerPrice: refunds * price, transactionIds: ids) }
        return side
    }

    @Test("agreement is no finding; proceeds within a cent a unit agree")
    func agreement() {
        #expect(Reconciliation.compare(apple: Self.side(3), storekeeper: Self.side(3)).isEmpty)
        #expect(Reconciliation.compare(apple: Self.side(3, proceeds: 690), storekeeper: Self.side(3, proceeds: 693)).isEmpty)
        #expect(Reconciliation.compare(apple: Self.side(0, refunds: 1), storekeeper: Self.side(0, refunds: 1)).isEmpty)
    }

    @Test("each kind of disagreement")
    func kinds() throws {
        let lost = Reconciliation.compare(apple: Self.side(3), storekeeper: Self.side(2))
        #expect(lost.map(\.kind) == [.appleOnly] && lost[0].appleUnits == 3 && lost[0].storekeeperUnits == 2)
        let forged = Reconciliation.compare(apple: Self.side(2), storekeeper: Self.side(3, ids: ["a", "b", "c"]))
        #expect(forged.map(\.kind) == [.storekeeperOnly] && forged[0].transactionIds == ["a", "b", "c"])
        #expect(Reconciliation.compare(apple: Self.side(2, price: 1_290), storekeeper: Self.side(2)).map(\.kind) == [.priceMismatch])
        let proceeds = Reconciliation.compare(apple: Self.side(2, proceeds: 840), storekeeper: Self.side(2))
        #expect(proceeds.map(\.kind) == [.proceedsMismatch] && proceeds[0].appleAmount == 1_680 && proceeds[0].storekeeperAmount == 1_380)
        #expect(Reconciliation.compare(apple: Self.side(0, refunds: 1), storekeeper: Self.side(0)).map(\.kind) == [.refundNotClawedBack])
        #expect(Reconciliation.compare(apple: Self.side(0), storekeeper: Self.side(0, refunds: 1)).map(\.kind) == [.refundNotReported])
    }

    @Test("sums saturate instead of trapping; samples stay bounded")
    func bounded() {
        var tally = Reconciliation.Tally()
        tally.add(units: .max, customerPrice: .max, proceeds: .min)
        tally.add(units: 1, customerPrice: 1, proceeds: -1)
        #expect(tally.units == .max && tally.customerPrice == .max && tally.proceeds == .min)
        for index in 0..<200 { tally.add(units: 0, customerPrice: 0, proceeds: 0, transactionId: String(index)) }
        #expect(tally.transactionIds.count == Reconciliation.Tally.sampleLimit)
        // A huge line compares without overflow.
        var huge = Reconciliation.Side()
        huge.purchases[Self.key] = .init(units: .max, customerPrice: .max, proceeds: .max)
        #expect(Reconciliation.compare(apple: huge, storekeeper: huge).isEmpty)
    }
}
