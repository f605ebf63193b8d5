import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperServer
import Testing

/// Issue 31, item 1: a purchase an organization assigned (Apple Business or School Manager, `ASSIGNED`) is delivered to
/// the user who holds it, is not their sale, gets no app account token and no consumption answer (Apple refuses both,
/// 4000227), and goes when the organization takes it back (`REVOKE`, `ASSIGNMENT_REVOKE`).
@Suite("Assigned purchases")
struct AssignedPurchaseTests {
    static let chapter = "com.example.storekeeper.chapter.2"

    @Test(
        "an organization's assignment is delivered to its user, never counted as their sale, never given a token or a consumption answer, and taken back by REVOKE",
        arguments: TestDatabase.available
    )
    func assigned(database: TestDatabase) async throws {
        try await ServerHarness.run(database, environment: .production, configure: { $0.lifecycle.customerConsented = true }) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let member = try await store.createAccount().id
            let chapter = try await store.assign(productId: Self.chapter, to: member)
            let yearly = try await store.assign(productId: PurchaseFlowTests.yearly, to: member)
            let chapterId = try #require(chapter.transaction.transactionId)
            let yearlyId = try #require(yearly.transaction.transactionId)
            for assigned in [chapter, yearly] {
                let reply = try await server.submit(assigned.signedTransaction, headers: ServerHarness.userHeaders("mia"))
                #expect(reply.status == 200 && reply.outcome == "delivered", "\(reply.text)")
            }
            try await server.deliverAndApply()
            let now = await server.simulatedNow
            #expect(try await server.activeEntitlements("mia", at: now) == ["chapter.2", "membership"])

            // Not mia's sale: her revenue lists both, counting neither.
            let revenue = try await RevenueTests.revenue(server, "mia")
            #expect(revenue.transactions.count == 2, "\(revenue.transactions)")
            #expect(revenue.transactions.allSatisfy { !$0.counted }, "\(revenue.transactions.map(\.counted))")
            // A buyer's own purchase beside it still counts.
            try await RevenueTests.buy(server, "mia")
            #expect(try await RevenueTests.revenue(server, "mia").transactions.filter(\.counted).count == 1)

            // No token is set at Apple for what was assigned (Apple refuses it).
            #expect(try await server.runJob("set-account-tokens") == 0)
            #expect(await store.transactions(account: member).allSatisfy { $0.appAccountToken == nil })

            // A refund question about it is closed without a call Apple would refuse.
            try await store.requestRefund(transactionId: chapterId)
            try await server.deliverAndApply()
            #expect(try await server.runJob("consumption-responder", now: now + 60) == 0)
            #expect(await store.receivedConsumptionAnswers().isEmpty)
            let closed = try await server.call(.GET, "/v1/admin/consumption-requests?status=failed", headers: ServerHarness.adminHeaders)
            let request = try #require((closed["requests"] as? [[String: Any]])?.first, "\(closed.text)")
            #expect((request["lastError"] as? String)?.contains("ASSIGNED") == true, "\(closed.text)")

            // The organization takes the subscription back.
            try await store.revokeAssignment(transactionId: yearlyId)
            try await server.deliverAndApply()
            #expect(try await server.activeEntitlements("mia", at: await server.simulatedNow) == ["chapter.2"])
            let truth = try await store.groundTruth(account: member)
            #expect(truth.isEntitled(to: Self.chapter) && !truth.isEntitled(to: PurchaseFlowTests.yearly))
            let state = try await server.subscription(yearlyId)
            #expect(state["state"] as? String == "revoked", "\(state)")
        }
    }
}
