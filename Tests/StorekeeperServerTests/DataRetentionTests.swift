import AppStoreSimulator
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperServer
import Testing

/// Issue 32, item 5: outbox events, applied notifications and audit entries are pruned past their configured ages, a
/// few rows per transaction, and never an event a webhook endpoint has not received yet.
@Suite("Pruning old records")
struct DataRetentionTests {
    static func events(_ server: ServerHarness, _ user: String) async throws -> [Components.Schemas.Event] {
        try await server.api(ServerHarness.adminHeaders).adminListEvents(query: .init(userId: user)).ok.body.json.events
    }

    @Test(
        "events the backend has are pruned after 30 days, those it has not are kept until it has them; notifications after 30, audit after 60",
        arguments: TestDatabase.available
    )
    func prune(database: TestDatabase) async throws {
        let receiver = WebhookReceiver()
        let port = try WebhookReceiver.freePort()
        try await receiver.serve(port: port) {
            try await ServerHarness.run(
                database,
                configure: {
                    $0.webhooks = [WebhookTests.endpoint(port: port)]
                    $0.dataRetention = DataRetentionConfiguration(
                        events: .seconds(30 * 86_400),
                        notifications: .seconds(30 * 86_400),
                        audit: .seconds(60 * 86_400),
                        interval: nil,
                        batchSize: 2
                    )
                }
            ) { server in
                // Ann's events reach the backend.
                try await WebhookTests.buy(server, users: ["ret-ann"], count: 3)
                let ann = try await Self.events(server, "ret-ann")
                #expect(ann.count >= 3)
                try await WebhookTests.waitFor(Set(ann.map(\.position)), at: receiver)
                // The backend's endpoint is paused: Bob's events wait for it.
                let paused = try await server.call(.POST, "/v1/admin/webhooks/backend/pause", headers: ServerHarness.adminHeaders)
                #expect(paused.status == 200, "\(paused.text)")
                try await WebhookTests.buy(server, users: ["ret-bob"], count: 2)
                let bob = try await Self.events(server, "ret-bob")
                #expect(bob.count >= 2)
                // An Apple notification, applied.
                await server.store.setDeliversNotifications(true)
                let (account, token) = try await server.newCustomer("ret-cy", product: PurchaseFlowTests.standard)
                _ = try await server.store.purchase(
                    productId: PurchaseFlowTests.standard,
                    account: account,
                    options: PurchaseOptions(appAccountToken: token)
                )
                try await server.deliverAndApply()
                let admin = try server.api(ServerHarness.adminHeaders)
                #expect(try await !admin.adminListNotifications(query: .init(limit: 100)).ok.body.json.notifications.isEmpty)
                let annAudit = try await server.audit("ret-ann").count
                #expect(annAudit > 0)

                // Nothing is old yet.
                #expect(try await server.runJob("prune") == 0)
                // 45 days on: Ann's delivered events and the applied notification go (two rows per transaction, so
                // several passes); Bob's undelivered events and the audit log stay.
                // The receiver has Ann's events before the server has recorded its answer, so the last of them
                // may still count as undelivered for a moment: prune until they are gone.
                let later = Date().addingTimeInterval(45 * 86_400)
                var pruned = 0
                var annLeft = ann.count
                for _ in 0..<100 where annLeft > 0 {
                    pruned += try await server.runJob("prune", now: later)
                    annLeft = try await Self.events(server, "ret-ann").count
                    if annLeft > 0 { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(annLeft == 0, "delivered, so pruned")
                #expect(pruned >= ann.count + 1, "\(pruned)")
                #expect(try await Self.events(server, "ret-bob").map(\.position) == bob.map(\.position))
                #expect(try await admin.adminListNotifications(query: .init(limit: 100)).ok.body.json.notifications.isEmpty)
                #expect(try await server.audit("ret-ann").count == annAudit)

                // The backend is back: once Bob's events are delivered, they go too.
                let resumed = try await server.call(.POST, "/v1/admin/webhooks/backend/resume", headers: ServerHarness.adminHeaders)
                #expect(resumed.status == 200, "\(resumed.text)")
                try await WebhookTests.waitFor(Set(bob.map(\.position)), at: receiver)
                var left = bob.count
                for _ in 0..<100 where left > 0 {
                    _ = try await server.runJob("prune", now: later)
                    left = try await Self.events(server, "ret-bob").count
                    if left > 0 { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(left == 0, "delivered, then pruned")
                // 61 days on, the audit log's older entries go as well.
                _ = try await server.runJob("prune", now: Date().addingTimeInterval(61 * 86_400))
                #expect(try await server.audit("ret-ann").isEmpty)
                // Balances and entitlements are not records of the past: they stay.
                #expect(try await server.coins("ret-ann") > 0)
            }
        }
    }
}
