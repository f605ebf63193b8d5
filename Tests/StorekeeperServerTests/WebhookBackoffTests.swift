import AsyncHTTPClient
import Foundation
import SQLKit
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage
import Testing

@testable import StorekeeperServer

/// Issue 18's "receiver down for a day": the sender driven pass by pass on a simulated clock (every ten minutes for
/// 24 hours) against a port nobody listens on, then against the backend once it is back.
@Suite("Event delivery over a simulated day")
struct WebhookBackoffTests {
    @Test(
        "a backend down for a day gets every event afterwards, once each, in per-user order; past its maximum age a delivery is a dead letter until retried",
        arguments: TestDatabase.available
    )
    func downForADay(database: TestDatabase) async throws {
        let port = try WebhookReceiver.freePort()
        let receiver = WebhookReceiver()
        try await ServerHarness.run(database) { server in
            try await server.withSideConnection { provider in
                let url = URL(string: "http://127.0.0.1:\(port)/hook")!
                let day = WebhookConfiguration(name: "backend", url: url, secrets: WebhookTests.secrets, concurrency: 8, timeout: .seconds(1))
                var short = day
                short.name = "short"
                short.maximumAge = .seconds(3_600)
                let delivery = WebhookDelivery(
                    endpoints: [day, short],
                    provider: provider,
                    ledger: Ledger(
                        provider: provider,
                        rules: LedgerRules(catalog: { Catalog(products: []) }, transferPolicy: .refuse, coinClawback: .debt),
                        logger: ServerHarness.quietLogger("ledger")
                    ),
                    metrics: ServerMetrics(),
                    ready: ReadinessGate(),
                    logger: ServerHarness.quietLogger("webhooks")
                )
                var now = Date()
                try await delivery.ledger.registerWebhookEndpoints(["backend", "short"], now: now)
                let users = ["day-ann", "day-bob", "day-cyd"]
                try await WebhookTests.buy(server, users: users, count: 3)
                let outbox = try await WebhookTests.outbox(server, users: users)
                #expect(outbox.count >= 9)
                // The first two hours nothing listens (connections refused); then the backend answers 503 for the
                // rest of the day. Each phase gets its own client, as a restarted sender would.
                let refusing = HTTPClient(eventLoopGroupProvider: .singleton)
                do {
                    for _ in 0..<12 {
                        now = now.addingTimeInterval(600)
                        for endpoint in [day, short] { try await delivery.runOnce(endpoint, client: refusing, now: now) }
                    }
                } catch {
                    try? await refusing.shutdown()
                    throw error
                }
                try await refusing.shutdown()
                try await WebhookReceiver(failureRate: 1).serve(port: port) {
                    try await Self.withClient { client in
                        for _ in 12..<144 {
                            now = now.addingTimeInterval(600)
                            for endpoint in [day, short] { try await delivery.runOnce(endpoint, client: client, now: now) }
                        }
                    }
                }
                #expect(receiver.received.isEmpty)
                let waiting = try await delivery.queue.stats("backend")
                #expect(waiting.pending == outbox.count && waiting.dead == 0, "a day is within the 72-hour maximum age")
                #expect(abs((waiting.oldestPending ?? now).timeIntervalSince(now) + 86_400) < 700, "the oldest has waited a day")
                let attempts = try await Self.attempts(provider)
                // Heads were tried with growing gaps all day; the events behind them were never sent out of turn.
                #expect(attempts.heads.min() ?? 0 >= 10, "\(attempts)")
                #expect(attempts.heads.max() ?? 0 <= 60, "backoff spaced the attempts: \(attempts)")
                #expect(attempts.others.allSatisfy { $0 == 0 }, "\(attempts)")
                let given = try await delivery.queue.stats("short")
                #expect(given.dead == outbox.count && given.pending == 0, "past an hour each delivery became a dead letter")

                try await receiver.serve(port: port) {
                    try await Self.withClient { client in
                        for _ in 0..<12 {
                            now = now.addingTimeInterval(3_600)
                            try await delivery.runOnce(day, client: client, now: now)
                        }
                        let received = receiver.received
                        let ids = received.compactMap { ($0.json["id"] as? NSNumber)?.int64Value }
                        #expect(ids.sorted() == outbox.map(\.position).sorted(), "every event once, none lost")
                        #expect(WebhookTests.checkOrder(received).isEmpty, "\(WebhookTests.checkOrder(received))")
                        #expect(try await delivery.queue.stats("backend").pending == 0)

                        // Dead letters go back in line when asked, and are delivered.
                        #expect(try await delivery.ledger.retryDeadWebhooks("short", now: now) == outbox.count)
                        for _ in 0..<12 {
                            now = now.addingTimeInterval(1)
                            try await delivery.runOnce(short, client: client, now: now)
                        }
                        #expect(receiver.received.count == 2 * outbox.count)
                        let stats = try await delivery.queue.stats("short")
                        #expect(stats.dead == 0 && stats.pending == 0)
                    }
                }
            }
        }
    }

    static func withClient(_ body: (HTTPClient) async throws -> Void) async throws {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try await body(client)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    /// Attempts of each user's first delivery to `backend`, and of every other one.
    static func attempts(_ provider: any DatabaseProvider) async throws -> (heads: [Int], others: [Int]) {
        try await provider.withSession { db in
            var heads: [Int] = []
            var others: [Int] = []
            var seen = Set<String>()
            for row in try await db.raw("SELECT ordering_key, attempts FROM webhook_queue WHERE endpoint = 'backend' ORDER BY id").all() {
                let key = try row.decode(column: "ordering_key", as: String.self)
                let attempts = Int(try row.decode(column: "attempts", as: Int64.self))
                if seen.insert(key).inserted { heads.append(attempts) } else { others.append(attempts) }
            }
            return (heads, others)
        }
    }
}
