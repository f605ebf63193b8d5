import AppStoreSimulator
import Foundation
import NIOHTTP1
import Testing

/// Servers sharing one PostgreSQL take users' rows in one sorted order per transaction, so their batches never
/// deadlock one another (issue 30 item 12).
@Suite struct MultiServerDeadlockTests {
    static let coins = PurchaseFlowTests.coins

    @Test(
        "three servers on one PostgreSQL, mixed purchases, notifications, spends and adjustments for the same users: no deadlock",
        .enabled(if: TestDatabase.available.contains(.postgres), "needs PostgreSQL (POSTGRES_PORT)")
    )
    func threeServers() async throws {
        try await ServerHarness.run(.postgres, instances: 3) { server in
            let users = (0..<8).map { "mix-\($0)" }
            var accounts: [String: String] = [:]
            for user in users { accounts[user] = try await server.store.createAccount().id }
            var expected: [String: Int] = [:]
            for round in 0..<3 {
                var purchases: [(user: String, jws: String)] = []
                for _ in 0..<3 {
                    for user in users {
                        let (_, purchase) = try await server.orderAndBuy(Self.coins, user: user, account: accounts[user]!)
                        purchases.append((user, purchase.signedTransaction))
                        expected[user, default: 0] += 60
                    }
                }
                // Apple's notifications of the same purchases, each posted to another server than the app's submission.
                let notifications = await server.store.takeDueDeliveries()
                for user in users { expected[user, default: 0] += 5 - 1 }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (index, purchase) in purchases.shuffled().enumerated() {
                        group.addTask {
                            let reply = try await server.submit(purchase.jws, headers: ServerHarness.userHeaders(purchase.user), instance: index)
                            #expect(reply.status == 200, "\(reply.text.prefix(300))")
                        }
                    }
                    for (index, notification) in notifications.enumerated() {
                        group.addTask {
                            let reply = try await server.call(
                                .POST,
                                "/apple/notifications/v2",
                                json: ["signedPayload": notification.signedPayload],
                                instance: index + 1
                            )
                            #expect(reply.status == 200, "\(reply.text.prefix(300))")
                        }
                    }
                    for (index, user) in users.shuffled().enumerated() {
                        group.addTask {
                            let adjusted = try await server.call(
                                .POST,
                                "/v1/admin/users/\(user)/wallet/adjust",
                                json: ["amount": 5, "reason": "goodwill", "idempotencyKey": "adjust-\(round)"],
                                headers: ServerHarness.adminHeaders,
                                instance: index + 2
                            )
                            #expect(adjusted.status == 200, "\(adjusted.text.prefix(300))")
                        }
                    }
                    for instance in 0..<3 {
                        group.addTask {
                            let reply = try await server.call(
                                .POST,
                                "/v1/admin/jobs/process-notifications/run",
                                json: [:],
                                headers: ServerHarness.adminHeaders,
                                instance: instance
                            )
                            #expect(reply.status == 200, "\(reply.text.prefix(300))")
                        }
                    }
                    try await group.waitForAll()
                }
                // Each user spends one coin on every server at once, once the round's coins are theirs.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (index, user) in users.enumerated() {
                        group.addTask {
                            let spent = try await server.call(
                                .POST,
                                "/v1/wallet/spend",
                                json: ["amount": 1, "idempotencyKey": "spend-\(round)"],
                                headers: ServerHarness.userHeaders(user),
                                instance: index
                            )
                            #expect(spent.status == 200, "\(spent.text.prefix(300))")
                        }
                    }
                    try await group.waitForAll()
                }
            }
            for user in users { #expect(try await server.coins(user) == expected[user], "\(user)") }
            // Every batch committed as it was: none failed as a whole on a deadlock and ran again.
            for instance in 0..<3 {
                let metrics = try await server.call(.GET, "/metrics", instance: instance).text
                let reruns = metrics.split(separator: "\n").filter { $0.hasPrefix("storekeeper_ledger_batch_reruns_total{") }
                #expect(reruns.count == 5, "every cause is exported from the start: \(reruns)")
                #expect(reruns.allSatisfy { $0.hasSuffix(" 0") }, "server \(instance): \(reruns)")
            }
        }
    }
}
