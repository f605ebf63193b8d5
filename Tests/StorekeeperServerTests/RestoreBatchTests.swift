import AppStoreSimulator
import AppStoreWire
import Foundation
import StorekeeperAPI
import Testing

/// A restore of hundreds of transactions delivers each once, answers in the order sent, and goes to the ledger all at
/// once so its deliveries share a few commits (issue 30, item 11, the restore part).
@Suite("Restore in batches")
struct RestoreBatchTests {
    @Test("200 transactions restored in one request: each delivered once, answered in order", arguments: TestDatabase.available)
    func restoreMany(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let account = try await server.store.createAccount().id
            var signed: [String] = []
            var ids: [String] = []
            for _ in 0..<200 {
                let bought = try await server.store.purchase(productId: PurchaseFlowTests.coins, account: account)
                signed.append(bought.signedTransaction)
                ids.append(try #require(bought.transaction.transactionId))
            }
            // A transaction sent twice in the same request is still delivered once.
            let client = try server.api(ServerHarness.userHeaders("rhea"))
            let started = ContinuousClock.now
            let answer = try await client.restorePurchases(body: .json(.init(signedTransactions: signed + [signed[0]]))).ok.body.json
            let elapsed = ContinuousClock.now - started
            #expect(answer.outcome == .delivered)
            #expect((answer.deliveries ?? []).map(\.transactionId) == ids + [ids[0]], "answered in the order sent")
            #expect((answer.deliveries ?? []).filter { !$0.alreadyDelivered }.count == 200)
            #expect(try await server.coins("rhea") == 200 * 60, "each credited once")
            print("restore of 201 on \(database): \(elapsed)")
        }
    }
}
