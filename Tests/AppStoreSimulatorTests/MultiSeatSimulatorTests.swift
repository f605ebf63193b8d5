import AppStoreSimulator
import AppStoreWire
import Foundation
import Testing

/// Multiseat subscriptions as Apple sells them (API 1.23): seats at tier prices, `price` the average per seat, a seat
/// refund that keeps the subscription for the seats left and lowers the next renewal's seats.
@Suite struct MultiSeatSimulatorTests {
    typealias H = SimulatorHarness
    static let teams = "com.example.storekeeper.teams.monthly"
    static let plan = MultiSeatPlan(invitationManagement: "DEVELOPER", tiers: [.init(fromSeat: 1, price: 9990), .init(fromSeat: 6, price: 7140)])

    @Test func tiersSplitTheSeatsByPrice() {
        #expect(Self.plan.priceTiers(seats: 1) == [.init(tierPrice: 9990, tierQuantity: 1)])
        #expect(Self.plan.priceTiers(seats: 5) == [.init(tierPrice: 9990, tierQuantity: 5)])
        #expect(Self.plan.priceTiers(seats: 6) == [.init(tierPrice: 9990, tierQuantity: 5), .init(tierPrice: 7140, tierQuantity: 1)])
        #expect(Self.plan.totalPrice(seats: 12) == 5 * 9990 + 7 * 7140)
    }

    @Test func aSeatRefundKeepsTheSubscriptionAndTheRenewalBillsTheSeatsLeft() async throws {
        let h = try await H()
        let account = try await h.store.createAccount()
        let bought = try await h.store.purchase(productId: Self.teams, account: account.id, options: PurchaseOptions(quantity: 12))
        let verified = try await h.verifier.verifyTransaction(bought.signedTransaction)
        #expect(verified.quantity == 12)
        let average: Int64 = Self.plan.totalPrice(seats: 12) / 12
        #expect(verified.price == average, "the average per seat")
        #expect(verified.multiSeatInfo?.invitationManagement == .developer)
        #expect(verified.multiSeatInfo?.totalPrice == Self.plan.totalPrice(seats: 12))
        let original = try #require(verified.originalTransactionId)

        try await h.store.refundSeats(originalTransactionId: original, count: 2)
        let refund = try await h.last()
        #expect(refund.type == .refund && refund.subtype == .seats)
        #expect(refund.payload.data?.status == .active)
        let refunded = try await h.transaction(refund)
        #expect(refunded.multiSeatInfo?.revokedSeatQuantity == 2)
        #expect(refunded.revocationDate == nil, "still valid for the seats left")
        let renewal = try await h.renewalInfo(refund)
        #expect(renewal.renewalQuantity == 10)
        #expect(renewal.multiSeatInfo?.renewalPriceTiers == Self.plan.priceTiers(seats: 10))
        #expect(try await h.store.groundTruth(account: account.id).isEntitled(to: Self.teams))
        // At least one seat stays; a subscription of one takes no seats.
        await #expect(throws: SimulatorError.self) { try await h.store.refundSeats(originalTransactionId: original, count: 10) }
        let other = try await h.store.createAccount()
        await #expect(throws: SimulatorError.self) {
            try await h.store.purchase(productId: H.yearly, account: other.id, options: PurchaseOptions(quantity: 2))
        }

        try await h.store.advance(by: 31 * H.day)
        let renewed = try #require(await h.store.transactions(account: account.id).last)
        #expect(renewed.transactionId != original && renewed.quantity == 10)
        #expect(renewed.multiSeatInfo?.priceTiers == Self.plan.priceTiers(seats: 10))
        #expect(renewed.multiSeatInfo?.revokedSeatQuantity == nil)
        _ = try await h.verifiedEvents()
    }
}
