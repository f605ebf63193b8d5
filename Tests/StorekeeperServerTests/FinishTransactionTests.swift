import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperServer
import Testing

/// Issue 19, item 4: once a consumable's delivery committed, the server tells Apple it is finished, and the device's
/// unfinished queue (StoreKit's `Transaction.unfinished`, as the simulator keeps it) no longer holds it.
@Suite("Server-side finish")
struct FinishTransactionTests {
    @Test("a delivered consumable leaves the device's unfinished queue; a subscription stays the app's to finish", arguments: TestDatabase.available)
    func finishesDeliveredConsumables(database: TestDatabase) async throws {
        try await ServerHarness.run(database, configure: { $0.apps[0].finishTransactions = true }) { server in
            let store = server.store
            let (account, token) = try await server.newCustomer("finisher", product: PurchaseFlowTests.coins)
            let coins = try await store.purchase(productId: PurchaseFlowTests.coins, account: account, appAccountToken: token)
            let member = try await store.purchase(productId: PurchaseFlowTests.monthly, account: account, appAccountToken: token)
            let coinsId = try #require(coins.transaction.transactionId)
            let memberId = try #require(member.transaction.transactionId)
            // The app crashed before finishing: both wait in the device's queue.
            #expect(Set(try await store.unfinishedTransactions(account: account).compactMap(\.transactionId)) == [coinsId, memberId])
            // Not delivered yet: nothing to finish.
            _ = try await server.runJob("finish-transactions")
            #expect(try await store.unfinishedTransactions(account: account).compactMap(\.transactionId).contains(coinsId))

            for signed in [coins.signedTransaction, member.signedTransaction] {
                let reply = try await server.submit(signed, headers: ServerHarness.userHeaders("finisher"))
                #expect(reply.status == 200, "\(reply.text)")
            }
            _ = try await server.runJob("finish-transactions")
            let left = try await store.unfinishedTransactions(account: account).compactMap(\.transactionId)
            #expect(left == [memberId], "the consumable was finished at Apple; the subscription is the app's to finish")
            #expect(try await server.coins("finisher") == 60)
            // Finished once: the next pass has nothing to do.
            #expect(try await server.runJob("finish-transactions") == 0)
            // Finished consumables also leave the receipt and history v1, as with Apple.
            let history = try await store.signedTransactions(account: account)
            #expect(history.count == 2, "Transaction.all still lists both")
            try await store.finishOnDevice(memberId)
            #expect(try await store.unfinishedTransactions(account: account).isEmpty)
        }
    }

    @Test("without finishTransactions the job is not configured")
    func offByDefault() async throws {
        try await ServerHarness.run(.sqlite) { server in
            let reply = try await server.call(.POST, "/v1/admin/jobs/finish-transactions/run", json: [:], headers: ServerHarness.adminHeaders)
            #expect(reply.status == 409)
            #expect(reply["code"] as? String == "job_unavailable")
        }
    }
}
