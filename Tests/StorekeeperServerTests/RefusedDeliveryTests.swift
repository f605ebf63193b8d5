import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import Foundation
import NIOHTTP1
import Testing

/// Issue 30 item 11: a notification whose transaction the delivery rules refuse is an outcome, not an error: the
/// transaction is parked for support and the notification is processed, never retried to a dead letter.
@Suite struct RefusedDeliveryTests {
    @Test("a notification carrying a quantity no store sells parks its transaction and is processed", arguments: TestDatabase.available)
    func parkedNotRetried(_ database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let account = try await server.store.createAccount().id
            _ = try await server.orderAndBuy(PurchaseFlowTests.coins, user: "quinn", account: account)
            let genuine = try #require(await server.store.sentNotifications().last { $0.type == .oneTimeCharge })
            var payload = genuine.payload
            var transaction = try SignedDataVerifier.decodeUnverifiedPayload(
                try #require(payload.data?.signedTransactionInfo),
                as: JWSTransactionDecodedPayload.self
            )
            transaction.quantity = 2_000
            let signer = try SharedIdentities.chain.signer()
            payload.data?.signedTransactionInfo = try signer.sign(transaction)
            let id = UUID().uuidString.lowercased()
            payload.notificationUUID = id
            let reply = try await server.call(.POST, "/apple/notifications/v2", json: ["signedPayload": try signer.sign(payload)])
            #expect(reply.status == 200, "\(reply.text)")
            try await server.runJob("process-notifications")

            let detail = try await server.call(.GET, "/v1/admin/notifications/\(id)", headers: ServerHarness.adminHeaders)
            #expect(detail["status"] as? String == "processed", "\(detail.text.prefix(400))")
            let pending = try await server.call(.GET, "/v1/admin/pending", headers: ServerHarness.adminHeaders)
            let parked = (pending["pending"] as? [[String: Any]] ?? []).first { $0["transactionId"] as? String == transaction.transactionId }
            #expect((parked?["reason"] as? String)?.contains("quantity_out_of_range") == true, "\(pending.text.prefix(600))")
            #expect(try await server.coins("quinn") == 0, "nothing credited for a quantity no store sells")
            // The batch committed as it was: no rerun of the whole batch for a refusal.
            let metrics = try await server.call(.GET, "/metrics").text
            #expect(
                metrics.contains("storekeeper_ledger_batch_reruns_total{cause=\"other\"} 0"),
                "\(metrics.split(separator: "\n").filter { $0.contains("reruns") })"
            )
        }
    }
}
