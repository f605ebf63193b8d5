import AppStoreSimulator
import AppStoreWire
import Foundation
import StorekeeperAPI
import StorekeeperServer
import Testing

/// Issue 19, item 1: a prorated refund (`REFUND_PRORATED`, API 1.19) takes back its share — of the coins, of the
/// subscription period — audited with the percentage; a full refund still takes everything.
@Suite("Prorated refunds")
struct ProratedRefundTests {
    static let day: TimeInterval = 86_400

    @Test("a quarter of a coin pack refunded takes a quarter of the coins; the event names the share", arguments: TestDatabase.available)
    func coins(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (account, token) = try await server.newCustomer("pru-coins", product: PurchaseFlowTests.coins)
            let bought = try await store.purchase(productId: PurchaseFlowTests.coins, account: account, appAccountToken: token)
            try await server.deliverAndApply()
            #expect(try await server.coins("pru-coins") == 60)
            let id = try #require(bought.transaction.transactionId)
            try await store.decideRefund(transactionId: id, approve: true, proratedPercentage: 25_000)
            try await server.deliverAndApply()
            #expect(await store.sentNotifications().last?.type == .refund)
            let signed = try #require(await store.transactions(account: account).first { $0.transactionId == id })
            #expect(signed.revocationType == .refundProrated)
            #expect(signed.revocationPercentage == 25_000)
            #expect(try await server.coins("pru-coins") == 45, "60 coins less a quarter")
            // The simulator's ground truth says the same (issue 30 item 8): three quarters of one 60-coin unit kept.
            let truth = try await store.groundTruth(account: account)
            #expect(truth.consumableShares[PurchaseFlowTests.coins] == 75_000)
            #expect(truth.consumables[PurchaseFlowTests.coins] == nil, "no whole unit stands")
            #expect(60 * (truth.consumableShares[PurchaseFlowTests.coins] ?? 0) / 100_000 == 45)
            let audit = try await server.audit("pru-coins")
            let refunded = try #require(audit.first { $0.action == "transaction.refunded" })
            #expect(refunded.amount == -15)
            #expect(refunded.detail?.contains("prorated, 25 %") == true, "\(refunded.detail ?? "")")
            let events = try await server.api(ServerHarness.adminHeaders).adminListEvents(query: .init(userId: "pru-coins")).ok.body.json.events
            let event = try #require(events.last { $0._type == "purchase.refunded" })
            #expect(event.details.additionalProperties["refundedShare"] == "25000")
            #expect(event.details.additionalProperties["coinsTaken"] == "15")
            #expect(event.details.additionalProperties["revocationType"] == "REFUND_PRORATED")

            // Apple reverses it: exactly the 15 come back.
            try await store.reverseRefund(transactionId: id)
            try await server.deliverAndApply()
            #expect(try await server.coins("pru-coins") == 60)
        }
    }

    @Test("a subscription period refunded in part keeps the unrefunded share, as the simulator's truth says")
    func subscriptionPeriod() async throws {
        try await ServerHarness.run(.sqlite) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (account, token) = try await server.newCustomer("pru-sub", product: PurchaseFlowTests.monthly)
            let bought = try await store.purchase(productId: PurchaseFlowTests.monthly, account: account, appAccountToken: token)
            try await server.deliverAndApply()
            let id = try #require(bought.transaction.transactionId)
            let start = try #require(bought.transaction.purchaseDate)
            let end = try #require(bought.transaction.expiresDate)
            try await store.advance(by: 5 * Self.day)
            // A quarter refunded: three quarters of the period stay (past the refund date).
            try await store.decideRefund(transactionId: id, approve: true, proratedPercentage: 25_000)
            try await server.deliverAndApply()
            let kept = start.addingTimeInterval(end.timeIntervalSince(start) * 0.75)
            #expect(kept > (await server.simulatedNow))
            try await server.expectMatchesTruth(user: "pru-sub", token: token, "after a prorated refund")
            #expect(try await server.activeEntitlements("pru-sub", at: kept - 3_600).contains("membership"))
            #expect(try await server.activeEntitlements("pru-sub", at: kept + 3_600).isEmpty)
            let truthBefore = await server.truthEntitlements(token: token, at: kept - 3_600)
            let truthAfter = await server.truthEntitlements(token: token, at: kept + 3_600)
            #expect(truthBefore.contains("membership") && truthAfter.isEmpty, "the simulator's truth agrees")
            let revoked = try #require(try await server.audit("pru-sub").first { $0.action == "entitlement.revoked" })
            #expect(revoked.detail?.contains("prorated, 25 %") == true)
        }
    }

    @Test("a full refund still takes the whole period from the refund date")
    func fullRefundStaysFull() async throws {
        try await ServerHarness.run(.sqlite) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (account, token) = try await server.newCustomer("pru-full", product: PurchaseFlowTests.monthly)
            let bought = try await store.purchase(productId: PurchaseFlowTests.monthly, account: account, appAccountToken: token)
            try await server.deliverAndApply()
            try await store.advance(by: 5 * Self.day)
            try await store.decideRefund(transactionId: try #require(bought.transaction.transactionId), approve: true)
            try await server.deliverAndApply()
            #expect(try await server.activeEntitlements("pru-full", at: await server.simulatedNow).isEmpty)
            try await server.expectMatchesTruth(user: "pru-full", token: token, "after a full refund")
            await #expect(throws: SimulatorError.self) {
                try await store.decideRefund(transactionId: "nope", approve: true, proratedPercentage: 100_000)
            }
        }
    }
}
