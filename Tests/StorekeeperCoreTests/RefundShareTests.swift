import Foundation
import StorekeeperCore
import Testing

/// The arithmetic of prorated refunds: shares of coins and of periods, bounded and overflow-free.
@Suite("Refund shares")
struct RefundShareTests {
    @Test("only REFUND_PRORATED with a percentage is partial; anything else, or out of range, is all")
    func reading() {
        #expect(RefundShare(revocationType: "REFUND_FULL", revocationPercentage: 25_000).isFull)
        #expect(RefundShare(revocationType: nil, revocationPercentage: nil).isFull)
        #expect(RefundShare(revocationType: "REFUND_PRORATED", revocationPercentage: nil).isFull)
        #expect(RefundShare(revocationType: "REFUND_PRORATED", revocationPercentage: 250_000).isFull)
        #expect(RefundShare(revocationType: "REFUND_PRORATED", revocationPercentage: -5).milliPercent == 0)
        #expect(RefundShare(revocationType: "REFUND_PRORATED", revocationPercentage: 42_500).description == "42.5 %")
        #expect(RefundShare(revocationType: "REFUND_PRORATED", revocationPercentage: 33_333).description == "33.333 %")
        #expect(RefundShare(revocationType: "REFUND_PRORATED", revocationPercentage: 25_000).description == "25 %")
    }

    @Test("shares of amounts round half up and never overflow")
    func amounts() {
        let quarter = RefundShare(revocationType: "REFUND_PRORATED", revocationPercentage: 25_000)
        #expect(quarter.of(60) == 15)
        #expect(quarter.of(2) == 1)
        #expect(quarter.of(1) == 0)
        #expect(quarter.of(0) == 0)
        #expect(quarter.of(-10) == 0)
        #expect(quarter.of(Int64.max) == Int64.max / 4 + 1)
        let almostAll = RefundShare(revocationType: "REFUND_PRORATED", revocationPercentage: 99_999)
        #expect(almostAll.of(Int64.max) <= Int64.max)
        #expect(RefundShare.full.of(Int64.max) == Int64.max)
    }

    @Test("a period keeps its unrefunded share, never less than was used, and a full refund cuts at the refund")
    func periods() {
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let end = start.addingTimeInterval(30 * 86_400)
        let refundDay = start.addingTimeInterval(5 * 86_400)
        let quarter = RefundShare(revocationType: "REFUND_PRORATED", revocationPercentage: 25_000)
        #expect(quarter.cut(start: start, end: end, at: refundDay) == start.addingTimeInterval(22.5 * 86_400))
        // Most refunded late: what was used before the refund stays used.
        let most = RefundShare(revocationType: "REFUND_PRORATED", revocationPercentage: 90_000)
        #expect(most.cut(start: start, end: end, at: refundDay) == refundDay)
        #expect(quarter.cut(start: start, end: nil, at: refundDay) == nil, "an unlock partly refunded stays")
        #expect(RefundShare.full.cut(start: start, end: nil, at: refundDay) == refundDay)
        #expect(quarter.cut(start: .distantPast, end: .distantFuture, at: refundDay) != nil)
        #expect(quarter.cut(start: end, end: start, at: refundDay) == nil, "a period that ends before it starts is left alone")
    }
}
