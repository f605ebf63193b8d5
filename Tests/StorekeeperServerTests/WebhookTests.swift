import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperServer
import StorekeeperTestSupport
import Testing

/// Issue 18: the outbox delivered to the app's backend over real sockets — signed (checked here and by Python's
/// `hmac`), at least once, in order per user, with the user's whole state, through a backend that fails calls and
/// through several servers sharing one database.
@Suite("Events to the app's backend")
struct WebhookTests {
    static let secrets = [String(repeating: "a", count: 24) + "-current-key", String(repeating: "b", count: 24) + "-previous-key"]

    static func endpoint(port: Int, kind: WebhookConfiguration.Kind = .events, types: [String] = []) -> WebhookConfiguration {
        WebhookConfiguration(
            name: kind == .events ? "backend" : "legacy",
            url: URL(string: "http://127.0.0.1:\(port)/hook")!,
            kind: kind,
            secrets: secrets,
            eventTypes: types,
            concurrency: 8,
            timeout: .seconds(5)
        )
    }

    /// Buys `count` coin packs for each user on their own simulator account, each submitted by the app.
    static func buy(_ server: ServerHarness, users: [String], count: Int, instances: Int = 1) async throws {
        var accounts: [String: String] = [:]
        for user in users { accounts[user] = try await server.store.createAccount().id }
        for round in 0..<count {
            for (index, user) in users.enumerated() {
                let (orderId, purchase) = try await server.orderAndBuy(PurchaseFlowTests.coins, user: user, account: accounts[user]!)
                let reply = try await server.submit(
                    purchase.signedTransaction,
                    headers: ServerHarness.userHeaders(user),
                    orderId: orderId,
                    instance: (round + index) % instances
                )
                #expect(reply.status == 200)
            }
        }
    }

    /// Every outbox event of `users`: (user, sequence, position).
    static func outbox(_ server: ServerHarness, users: [String]) async throws -> [(user: String, sequence: Int64, position: Int64)] {
        var all: [(String, Int64, Int64)] = []
        for user in users {
            let events = try await server.api(ServerHarness.adminHeaders).adminListEvents(query: .init(userId: user)).ok.body.json.events
            all += events.map { ($0.userId, $0.sequence, $0.position) }
        }
        return all
    }

    /// Waits until the receiver holds every id in `expected` (or a minute passed).
    static func waitFor(_ expected: Set<Int64>, at receiver: WebhookReceiver) async throws {
        for _ in 0..<600 {
            let ids = Set(receiver.received.compactMap { ($0.json["id"] as? NSNumber)?.int64Value })
            if expected.isSubset(of: ids) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Per user, the sequence numbers in the order they first arrived must only go up, and each arrival of an event
    /// already seen (an at-least-once duplicate) must be the same event.
    static func checkOrder(_ received: [WebhookReceiver.Received]) -> [String] {
        var problems: [String] = []
        var last: [String: Int64] = [:]
        var bodies: [Int64: String] = [:]
        for item in received {
            let json = item.json
            guard let id = (json["id"] as? NSNumber)?.int64Value, let user = json["user"] as? String,
                let sequence = (json["sequence"] as? NSNumber)?.int64Value
            else {
                problems.append("a body without id, user or sequence")
                continue
            }
            if let type = bodies[id] {
                if type != json["type"] as? String { problems.append("event \(id) arrived twice with different types") }
                continue
            }
            bodies[id] = json["type"] as? String
            if let previous = last[user], sequence != previous + 1 {
                problems.append("\(user): sequence \(sequence) arrived after \(previous)")
            }
            last[user] = sequence
        }
        return problems
    }

    @Test(
        "events arrive signed, complete and in per-user order with the user's state, through a backend failing 30 % of calls",
        arguments: TestDatabase.available
    )
    func flakyBackend(database: TestDatabase) async throws {
        let receiver = WebhookReceiver(failureRate: 0.3)
        let port = try WebhookReceiver.freePort()
        try await receiver.serve(port: port) {
            try await ServerHarness.run(database, configure: { $0.webhooks = [Self.endpoint(port: port)] }) { server in
                let users = ["wh-ann", "wh-bob", "wh-cyd"]
                try await Self.buy(server, users: users, count: 4)
                let spent = try await server.call(
                    .POST,
                    "/v1/wallet/spend",
                    json: ["amount": 30, "idempotencyKey": "wh-1"],
                    headers: ServerHarness.userHeaders("wh-bob")
                )
                #expect(spent.status == 200)
                let outbox = try await Self.outbox(server, users: users)
                #expect(outbox.count >= 12, "a delivery and a wallet change per purchase")
                try await Self.waitFor(Set(outbox.map(\.position)), at: receiver)
                let received = receiver.received
                let ids = Set(received.compactMap { ($0.json["id"] as? NSNumber)?.int64Value })
                #expect(Set(outbox.map(\.position)).isSubset(of: ids), "every event arrived")
                #expect(receiver.failures > 0, "the backend refused some calls, which were retried")
                #expect(Self.checkOrder(received).isEmpty, "\(Self.checkOrder(received))")
                for item in received {
                    let header = try #require(item.header("Storekeeper-Signature"))
                    #expect(header.components(separatedBy: "v1=").count == 3, "one signature per active secret")
                    for secret in Self.secrets {
                        #expect(WebhookSignature.verify(header, body: item.body, secret: secret, now: Date()))
                    }
                    #expect(!WebhookSignature.verify(header, body: item.body + Data(" ".utf8), secret: Self.secrets[0], now: Date()))
                    #expect(!WebhookSignature.verify(header, body: item.body, secret: "not-the-secret-0123456789abcdef", now: Date()))
                    #expect(item.header("Storekeeper-Event-Id") == (item.json["id"] as? NSNumber)?.stringValue)
                }
                // The state rides with the event: bob's last event shows his balance after the spend.
                let bobs = received.filter { $0.json["user"] as? String == "wh-bob" }
                let lastState = try #require(bobs.last?.json["state"] as? [String: Any])
                let wallet = try #require(lastState["wallet"] as? [String: Any])
                #expect((wallet["coins"] as? NSNumber)?.intValue == (try await server.coins("wh-bob")))
                #expect(bobs.contains { $0.json["type"] as? String == "wallet.changed" })
                try Self.checkWithPython(received)
            }
        }
    }

    @Test("three servers on one database deliver each user's events in order", arguments: TestDatabase.available.filter { $0 == .postgres })
    func threeServers(database: TestDatabase) async throws {
        let receiver = WebhookReceiver(failureRate: 0.1)
        let port = try WebhookReceiver.freePort()
        try await receiver.serve(port: port) {
            try await ServerHarness.run(database, instances: 3, configure: { $0.webhooks = [Self.endpoint(port: port)] }) { server in
                let users = (0..<6).map { "wh3-\($0)" }
                try await Self.buy(server, users: users, count: 4, instances: 3)
                let outbox = try await Self.outbox(server, users: users)
                try await Self.waitFor(Set(outbox.map(\.position)), at: receiver)
                let ids = Set(receiver.received.compactMap { ($0.json["id"] as? NSNumber)?.int64Value })
                #expect(Set(outbox.map(\.position)).isSubset(of: ids))
                #expect(Self.checkOrder(receiver.received).isEmpty, "\(Self.checkOrder(receiver.received))")
            }
        }
    }

    @Test("Apple's notifications are forwarded byte for byte; event filters choose what an endpoint is sent")
    func forwardingAndFilters() async throws {
        let receiver = WebhookReceiver()
        let port = try WebhookReceiver.freePort()
        try await receiver.serve(port: port) {
            let endpoints = [
                Self.endpoint(port: port, kind: .apple),
                WebhookConfiguration(
                    name: "purchases",
                    url: URL(string: "http://127.0.0.1:\(port)/hook")!,
                    secrets: Self.secrets,
                    eventTypes: ["purchase.*"]
                ),
                // Another app's backend: none of this app's purchase events, but the user-wide ones.
                WebhookConfiguration(
                    name: "other-app",
                    url: URL(string: "http://127.0.0.1:\(port)/hook")!,
                    secrets: Self.secrets,
                    bundleIds: ["com.example.elsewhere"]
                ),
            ]
            try await ServerHarness.run(.sqlite, configure: { $0.webhooks = endpoints }) { server in
                await server.store.setDeliversNotifications(true)
                let (account, token) = try await server.newCustomer("wh-fwd", product: PurchaseFlowTests.standard)
                let subscription = try await server.store.purchase(
                    productId: PurchaseFlowTests.standard,
                    account: account,
                    options: .init(appAccountToken: token)
                )
                try await server.deliverAndApply()
                // Turning auto-renew off leaves the state active; the backend still hears of it.
                try await server.store.setAutoRenew(false, originalTransactionId: try #require(subscription.transaction.originalTransactionId))
                try await server.deliverAndApply()
                try await Self.buy(server, users: ["wh-fwd"], count: 1)
                // Spending coins is about the user, not one app's purchase.
                let spent = try await server.call(
                    .POST,
                    "/v1/wallet/spend",
                    json: ["amount": 1, "idempotencyKey": "wh-fwd-spend"],
                    headers: ServerHarness.userHeaders("wh-fwd")
                )
                #expect(spent.status == 200)
                for _ in 0..<300 {
                    if receiver.received.contains(where: { $0.header("Storekeeper-Notification-Id") != nil })
                        && receiver.received.filter({ $0.header("Storekeeper-Endpoint") == "purchases" }).count >= 2
                        && receiver.received.contains(where: {
                            $0.header("Storekeeper-Endpoint") == "other-app" && $0.json["type"] as? String == "wallet.changed"
                        })
                    {
                        break
                    }
                    try await Task.sleep(for: .milliseconds(100))
                }
                let forwarded = receiver.received.filter { $0.header("Storekeeper-Notification-Id") != nil }
                #expect(!forwarded.isEmpty)
                let admin = try server.api(ServerHarness.adminHeaders)
                for item in forwarded {
                    let id = try #require(item.header("Storekeeper-Notification-Id"))
                    let stored = try await admin.adminGetNotification(path: .init(id: id)).ok.body.json
                    #expect(String(decoding: item.body, as: UTF8.self) == stored.value2.body, "the body as Apple sent it")
                    #expect(item.json["signedPayload"] != nil)
                }
                let events = receiver.received.filter { $0.header("Storekeeper-Endpoint") == "purchases" }
                #expect(events.count >= 2, "the subscription's and the coins' deliveries")
                #expect(events.allSatisfy { ($0.json["type"] as? String)?.hasPrefix("purchase.") == true }, "only purchase events")
                let elsewhere = receiver.received.filter { $0.header("Storekeeper-Endpoint") == "other-app" }.compactMap {
                    $0.json["type"] as? String
                }
                #expect(elsewhere == ["wallet.changed"], "only the user-wide event goes to another app's endpoint: \(elsewhere)")
                #expect(!elsewhere.contains { $0.hasPrefix("purchase.") || $0.hasPrefix("subscription.") }, "\(elsewhere)")
                let outbox = try await admin.adminListEvents(query: .init(userId: "wh-fwd")).ok.body.json.events
                #expect(outbox.contains { $0._type == "subscription.changed" }, "sent to the outbox, filtered out of this endpoint")
                let switched = outbox.last { $0._type == "subscription.changed" }
                #expect(switched?.details.additionalProperties["autoRenew"] == "false", "\(outbox.map(\.details))")
                #expect(switched?.details.additionalProperties["state"] == "active")
            }
        }
    }

    @Test("admins list endpoints, pause and resume one, replay a user's events, and are told what they got wrong", arguments: TestDatabase.available)
    func adminControls(database: TestDatabase) async throws {
        let receiver = WebhookReceiver()
        let port = try WebhookReceiver.freePort()
        try await receiver.serve(port: port) {
            try await ServerHarness.run(database, configure: { $0.webhooks = [Self.endpoint(port: port)] }) { server in
                let admin = ServerHarness.adminHeaders
                #expect(try await server.call(.GET, "/v1/admin/webhooks").status == 401)
                let paused = try await server.call(.POST, "/v1/admin/webhooks/backend/pause", headers: admin)
                #expect(paused.status == 200 && (paused["webhook"] as? [String: Any])?["paused"] as? Bool == true, "\(paused.text)")
                try await Self.buy(server, users: ["wh-pau"], count: 2)
                let outbox = try await Self.outbox(server, users: ["wh-pau"])
                try await Task.sleep(for: .seconds(1))
                #expect(receiver.received.isEmpty, "nothing is sent while paused")
                let listed = try await server.call(.GET, "/v1/admin/webhooks", headers: admin)
                let first = try #require((listed["webhooks"] as? [[String: Any]])?.first)
                #expect(first["name"] as? String == "backend" && first["kind"] as? String == "events")
                #expect((first["pending"] as? Int ?? 0) == outbox.count, "\(listed.text)")
                #expect(first["oldestPendingAt"] != nil)

                #expect(try await server.call(.POST, "/v1/admin/webhooks/backend/resume", headers: admin).status == 200)
                try await Self.waitFor(Set(outbox.map(\.position)), at: receiver)
                #expect(receiver.received.count == outbox.count)
                #expect(Self.checkOrder(receiver.received).isEmpty)

                let replay = try await server.call(.POST, "/v1/admin/webhooks/backend/replay", json: ["userId": "wh-pau"], headers: admin)
                #expect(replay.status == 200 && replay["queued"] as? Int == outbox.count, "\(replay.text)")
                for _ in 0..<100 where receiver.received.count < 2 * outbox.count { try await Task.sleep(for: .milliseconds(100)) }
                let ids = receiver.received.compactMap { ($0.json["id"] as? NSNumber)?.int64Value }
                #expect(ids.count == 2 * outbox.count && Set(ids) == Set(outbox.map(\.position)), "a replay re-sends the same event ids")

                let unknown = try await server.call(.POST, "/v1/admin/webhooks/nobody/pause", headers: admin)
                #expect(unknown.status == 404 && unknown.code == "unknown_webhook")
                for body: [String: Any] in [
                    [:], ["userId": "wh-pau", "eventId": 1], ["from": "2026-02-01T00:00:00Z", "to": "2026-01-01T00:00:00Z"],
                ] {
                    let refused = try await server.call(.POST, "/v1/admin/webhooks/backend/replay", json: body, headers: admin)
                    #expect(refused.status == 400 && refused.code == "invalid_replay", "\(body): \(refused.text)")
                }
                let badAction = try await server.call(.POST, "/v1/admin/webhooks/backend/explode", headers: admin)
                #expect(badAction.status == 400 || badAction.status == 404)
            }
        }
    }

    /// An independent check of the signatures: Python's `hmac` over `t.body`, for each secret.
    static func checkWithPython(_ received: [WebhookReceiver.Received]) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sk-hmac-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let lines = try received.map { item -> String in
            let object: [String: String] = ["header": item.header("Storekeeper-Signature") ?? "", "body": item.body.base64EncodedString()]
            return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        }
        let input = directory.appendingPathComponent("deliveries.jsonl")
        try lines.joined(separator: "\n").write(to: input, atomically: true, encoding: .utf8)
        let script = """
            import base64, hashlib, hmac, json, sys
            secrets = sys.argv[2:]
            checked = 0
            for line in open(sys.argv[1]):
                item = json.loads(line)
                parts = [p.split("=", 1) for p in item["header"].split(",")]
                t = [v for k, v in parts if k == "t"][0]
                signatures = [v for k, v in parts if k == "v1"]
                body = base64.b64decode(item["body"])
                for secret in secrets:
                    expected = hmac.new(secret.encode(), t.encode() + b"." + body, hashlib.sha256).hexdigest()
                    if not any(hmac.compare_digest(expected, s) for s in signatures):
                        sys.exit("signature mismatch for secret %d" % secrets.index(secret))
                checked += 1
            print(checked)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, input.path] + secrets
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try ProcessLauncher.run(process)
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.trimmingCharacters(in: .whitespacesAndNewlines) == String(received.count), "\(text)")
    }
}
