import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import SQLKit
import StorekeeperServer
import StorekeeperStorage
import Testing

/// Issue 30 item 11: one notification whose own effects fail holds back only itself. Its batch is not rolled back and
/// run again: the others commit as they are, and the failing one goes back to pending for the processor.
@Suite struct FailingEffectTests {
    @Test("a refund whose effect fails stays pending; the refund beside it applies; the batch is not run again", arguments: TestDatabase.available)
    func onlyTheFailingMessage(_ database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let store = server.store
            var bought: [String: String] = [:]
            for user in ["fay", "gil"] {
                let account = try await store.createAccount().id
                let (orderId, purchase) = try await server.orderAndBuy(PurchaseFlowTests.coins, user: user, account: account)
                #expect(try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders(user), orderId: orderId).status == 200)
                bought[user] = try #require(purchase.transaction.transactionId)
            }
            for user in ["fay", "gil"] { try await store.decideRefund(transactionId: try #require(bought[user]), approve: true) }
            let refunds = await store.sentNotifications().filter { $0.type == .refund }.map { (id: $0.notificationUUID, payload: $0.signedPayload) }
            #expect(refunds.count == 2)
            // Fay's refund cannot be recorded (a fault in the database, injected for her transaction only).
            let failing = try #require(bought["fay"])
            try await server.withSideConnection { db in
                try await db.withSession { sql in
                    switch database {
                    case .sqlite:
                        try await sql.raw(
                            """
                            CREATE TRIGGER fail_one BEFORE INSERT ON revocations WHEN NEW.transaction_id = \(unsafeRaw: "'\(failing)'")
                            BEGIN SELECT RAISE(ABORT, 'injected fault'); END
                            """
                        ).run()
                    case .postgres:
                        try await sql.raw(
                            """
                            CREATE FUNCTION fail_one() RETURNS trigger AS $$ BEGIN
                                IF NEW.transaction_id = \(unsafeRaw: "'\(failing)'") THEN RAISE EXCEPTION 'injected fault'; END IF;
                                RETURN NEW;
                            END $$ LANGUAGE plpgsql
                            """
                        ).run()
                        try await sql.raw("CREATE TRIGGER fail_one BEFORE INSERT ON revocations FOR EACH ROW EXECUTE FUNCTION fail_one()").run()
                    }
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for refund in refunds {
                    group.addTask {
                        let reply = try await server.call(.POST, "/apple/notifications/v2", json: ["signedPayload": refund.payload])
                        #expect(reply.status == 200, "stored, whatever its effects: \(reply.text)")
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await server.coins("gil") == 0, "gil's refund applied")
            #expect(try await server.coins("fay") == 60, "fay's refund held back")
            let admin = ServerHarness.adminHeaders
            let statuses = try await refunds.asyncMap { try await server.call(.GET, "/v1/admin/notifications/\($0.id)", headers: admin) }
            #expect(statuses.filter { $0["status"] as? String == "processed" }.count == 1, "\(statuses.map(\.text))")
            let pending = try #require(statuses.first { $0["status"] as? String == "pending" })
            // Why, as the ledger (or the processor retrying it since) saw it; PostgreSQL's driver error names no message.
            #expect((pending["lastError"] as? String)?.isEmpty == false, "\(pending.text.prefix(500))")
            let metrics = try await server.call(.GET, "/metrics").text
            let reruns = metrics.split(separator: "\n").filter { $0.hasPrefix("storekeeper_ledger_batch_reruns_total{") }
            #expect(reruns.count == 5 && reruns.allSatisfy { $0.hasSuffix(" 0") }, "\(reruns)")
        }
    }
}

extension Array where Element: Sendable {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
