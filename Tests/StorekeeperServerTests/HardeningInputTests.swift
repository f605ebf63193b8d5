import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import SQLKit
import StorekeeperAPI
import StorekeeperCore
import StorekeeperServer
import StorekeeperStorage
import Testing

/// Inputs that used to mint money, leak a secret, fill the disk, crash the process or answer 500 (issue 13,
/// items 2, 3, 10–13, 15, 19 and 20): each test failed before its fix.
@Suite("Hardening: hostile input")
struct HardeningInputTests {
    static let coins = PurchaseFlowTests.coins
    static let monthly = PurchaseFlowTests.monthly
    static let secret = "hardening-v1-shared-secret-value"

    static func millis(_ date: Date) -> String { String(Int64(date.timeIntervalSince1970 * 1000)) }

    /// A V1 body with the right shared secret and entries nobody at Apple ever signed.
    static func forgedV1(token: UUID, latestReceipt: String?, now: Date) -> [String: Any] {
        let entries: [[String: Any]] = [
            [
                "transaction_id": "990000000000002", "original_transaction_id": "990000000000001",
                "product_id": monthly, "purchase_date_ms": millis(now), "expires_date_ms": millis(now.addingTimeInterval(30 * 86_400)),
                "quantity": "1", "app_account_token": token.uuidString.lowercased(), "subscription_group_identifier": "21000001",
            ],
            [
                "transaction_id": "990000000000003", "original_transaction_id": "990000000000003",
                "product_id": "com.example.storekeeper.coins.300", "purchase_date_ms": millis(now), "quantity": "1",
                "app_account_token": token.uuidString.lowercased(),
            ],
        ]
        var unified: [String: Any] = ["environment": "Sandbox", "status": 0, "latest_receipt_info": entries, "pending_renewal_info": []]
        if let latestReceipt { unified["latest_receipt"] = latestReceipt }
        return [
            "notification_type": "DID_RENEW", "password": secret, "environment": "Sandbox", "bid": "com.example.storekeeper",
            "bvrs": "1", "auto_renew_status": "true", "original_transaction_id": "990000000000001", "unified_receipt": unified,
        ]
    }

    // MARK: Tests

    @Test("item 2: an unsigned V1 body is a hint; only what verifyReceipt confirms is applied", arguments: TestDatabase.available)
    func v1IsOnlyAHint(database: TestDatabase) async throws {
        try await ServerHarness.run(database, configure: { $0.apps[0].sharedSecret = Self.secret }) { server in
            let (account, token) = try await server.newCustomer("forger", product: "com.example.storekeeper.coins.300")
            // A genuine receipt of the forger's own (a chapter), so verifyReceipt answers: it says nothing of coins.
            _ = try await server.store.purchase(productId: PurchaseFlowTests.chapter, account: account)
            let genuine = try await server.receipt(account: account)
            let now = await server.simulatedNow
            for receipt in [nil, "bm90IGEgcmVjZWlwdA==", genuine] {
                let reply = try await server.call(
                    .POST,
                    "/apple/notifications/v1",
                    json: Self.forgedV1(token: token, latestReceipt: receipt, now: now)
                )
                #expect(reply.status == 200, "the body is stored (Apple would retry otherwise): \(reply.text)")
            }
            try await server.runJob("process-notifications")
            #expect(try await server.coins("forger") == 0)
            #expect(server.entitlement("membership", of: try await server.me("forger")) == nil)
            let transactions = try await server.me("forger").transactions
            #expect(!transactions.contains { $0.transactionId.hasPrefix("99") }, "\(transactions)")
        }
    }

    @Test("item 3: the V1 shared secret is never stored or returned", arguments: TestDatabase.available)
    func sharedSecretRedacted(database: TestDatabase) async throws {
        try await ServerHarness.run(database, configure: { $0.apps[0].sharedSecret = Self.secret }) { server in
            let (_, token) = try await server.newCustomer("rex", product: Self.coins)
            let body = Self.forgedV1(token: token, latestReceipt: nil, now: Date())
            // Apple's retry sends the same bytes.
            let bytes = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
            let stored = try await server.call(.POST, "/apple/notifications/v1", raw: bytes)
            #expect(stored.status == 200, "\(stored.text)")
            let id = try #require(stored["id"] as? String)
            let again = try await server.call(.POST, "/apple/notifications/v1", raw: bytes)
            #expect(again["status"] as? String == "duplicate", "deduplicated on the body as received")
            var wrong = body
            wrong["password"] = "a-wrong-secret-someone-tried"
            let refused = try await server.call(.POST, "/apple/notifications/v1", json: wrong)
            #expect(refused.status == 403)

            let detail = try await server.call(.GET, "/v1/admin/notifications/\(id)", headers: ServerHarness.adminHeaders)
            #expect(detail.status == 200)
            #expect(!detail.text.contains(Self.secret), "\(detail.text.prefix(400))")
            let list = try await server.call(.GET, "/v1/admin/notifications", headers: ServerHarness.adminHeaders)
            #expect(!list.text.contains(Self.secret))
            try await server.withSideConnection { db in
                try await db.withSession { sql in
                    for (table, column) in [("notifications", "body"), ("notification_refusals", "prefix")] {
                        let rows = try await sql.raw("SELECT \(unsafeRaw: column) AS text FROM \(unsafeRaw: table)").all()
                        for row in rows {
                            let text = try row.decode(column: "text", as: String?.self) ?? ""
                            #expect(!text.contains(Self.secret) && !text.contains("a-wrong-secret"), "\(table) keeps a secret")
                        }
                    }
                }
            }
        }
    }

    @Test("item 10: no catalog or admin number can trap the process", arguments: TestDatabase.available)
    func boundedNumbers(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let huge = try await server.call(
                .PUT,
                "/v1/admin/catalog/products/\(Self.coins)",
                json: ["id": Self.coins, "kind": "consumable", "coins": Int64.max],
                headers: ServerHarness.adminHeaders
            )
            #expect(huge.status == 422, "\(huge.text)")
            #expect(huge.code == "invalid_catalog")

            // A definition that got into the database anyway (an older version, a hand edit).
            try await server.withSideConnection { db in
                try await db.withSession { sql in
                    try await sql.raw(
                        """
                        UPDATE catalog_entries SET definition = \(bind: #"{"id":"com.example.storekeeper.coins.60","kind":"consumable","coins":9223372036854775807}"#)
                        WHERE kind = 'product' AND id = \(bind: Self.coins)
                        """
                    ).run()
                }
            }
            try await Task.sleep(for: .milliseconds(600))
            let account = try await server.store.createAccount().id
            let two = try await server.store.purchase(productId: Self.coins, account: account, options: .init(quantity: 2))
            let reply = try await server.submit(two.signedTransaction, headers: ServerHarness.userHeaders("otto"))
            #expect((400..<600).contains(reply.status), "\(reply.text)")
            #expect(reply.outcome == "retry", "kept until the catalog is fixed: \(reply.text)")
            #expect(try await server.call(.GET, "/health").status == 200, "the process is still alive")

            for job in ["process-notifications", "catch-up", "renewal-sweep", "consumption-responder", "business-metrics", "reconciliation"] {
                for now in [Int64.max, Int64.min, -1] {
                    let run = try await server.call(.POST, "/v1/admin/jobs/\(job)/run", json: ["now": now], headers: ServerHarness.adminHeaders)
                    #expect(run.status == 400, "\(job) \(now): \(run.text)")
                    #expect(run.code == "invalid_now")
                }
            }
            let at = try await server.call(.GET, "/v1/me?at=\(Int64.max)", headers: ServerHarness.userHeaders("otto"))
            #expect(at.status == 400, "\(at.text)")

            for amount in [Int64.max, Int64.min, 1_000_000_000_001] {
                let adjust = try await server.call(
                    .POST,
                    "/v1/admin/users/otto/wallet/adjust",
                    json: ["amount": amount, "idempotencyKey": "k\(amount)"],
                    headers: ServerHarness.adminHeaders
                )
                #expect(adjust.status == 400, "\(amount): \(adjust.text)")
                #expect(adjust.code == "invalid_amount")
            }
            let spend = try await server.call(
                .POST,
                "/v1/wallet/spend",
                json: ["amount": Int64.max, "idempotencyKey": "max"],
                headers: ServerHarness.userHeaders("otto")
            )
            #expect(spend.status == 400)

            // Balances already at the edge: a credit past the limit is refused, a merge of an extreme balance too.
            let credit = try await server.call(
                .POST,
                "/v1/admin/users/otto/wallet/adjust",
                json: ["amount": 10, "idempotencyKey": "seed"],
                headers: ServerHarness.adminHeaders
            )
            #expect(credit.status == 200)
            let guest = try await server.newGuest()
            try await server.withSideConnection { db in
                try await db.withSession { sql in
                    try await sql.raw("UPDATE wallets SET balance = \(bind: Int64.max - 5) WHERE user_id = 'otto'").run()
                    try await sql.raw(
                        "INSERT INTO users (id, kind, created_at) VALUES (\(bind: guest.userId), 'guest', 0) ON CONFLICT (id) DO NOTHING"
                    ).run()
                    try await sql.raw(
                        "INSERT INTO wallets (user_id, currency, balance) VALUES (\(bind: guest.userId), 'coins', \(bind: Int64.min))"
                    ).run()
                }
            }
            let over = try await server.call(
                .POST,
                "/v1/admin/users/otto/wallet/adjust",
                json: ["amount": 100, "idempotencyKey": "over"],
                headers: ServerHarness.adminHeaders
            )
            #expect(over.status == 409, "\(over.text)")
            #expect(over.code == "balance_limit")
            let merge = try await server.call(.POST, "/v1/me/merge", json: ["guestToken": guest.token], headers: ServerHarness.userHeaders("otto"))
            #expect(merge.status == 409, "\(merge.text)")
            #expect(merge.code == "balance_limit")
            #expect(try await server.call(.GET, "/health").status == 200)
        }
    }

    @Test("item 11: NUL bytes, negative limits and key races are 4xx or the stored answer, never 500", arguments: TestDatabase.available)
    func ordinaryBadInput(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let user = ServerHarness.userHeaders("nul")
            let admin = ServerHarness.adminHeaders
            let account = try await server.store.createAccount().id
            let bought = try await server.store.purchase(productId: Self.coins, account: account)
            let cases: [(String, ServerHarness.Reply)] = [
                ("spend key", try await server.call(.POST, "/v1/wallet/spend", json: ["amount": 1, "idempotencyKey": "a\u{0}b"], headers: user)),
                (
                    "spend reason",
                    try await server.call(.POST, "/v1/wallet/spend", json: ["amount": 1, "idempotencyKey": "ok", "reason": "x\u{0}"], headers: user)
                ),
                ("order product", try await server.call(.POST, "/v1/orders", json: ["productId": "p\u{0}"], headers: user)),
                ("purchase orderId", try await server.submit(bought.signedTransaction, headers: user, orderId: "ord_\u{0}")),
                (
                    "adjust key",
                    try await server.call(
                        .POST,
                        "/v1/admin/users/nul/wallet/adjust",
                        json: ["amount": 1, "idempotencyKey": "k\u{0}"],
                        headers: admin
                    )
                ),
                (
                    "adjust reason",
                    try await server.call(
                        .POST,
                        "/v1/admin/users/nul/wallet/adjust",
                        json: ["amount": 1, "idempotencyKey": "k", "reason": "\u{0}"],
                        headers: admin
                    )
                ),
                ("order path", try await server.call(.GET, "/v1/orders/a%00b", headers: user)),
                ("cancel path", try await server.call(.POST, "/v1/orders/a%00b/cancel", headers: user)),
                ("user path", try await server.call(.GET, "/v1/admin/users/a%00b", headers: admin)),
                ("audit path", try await server.call(.GET, "/v1/admin/users/a%00b/audit", headers: admin)),
                ("notification path", try await server.call(.GET, "/v1/admin/notifications/a%00b", headers: admin)),
                ("retry path", try await server.call(.POST, "/v1/admin/notifications/a%00b/retry", headers: admin)),
                ("subscription path", try await server.call(.GET, "/v1/admin/subscriptions/a%00b", headers: admin)),
                ("status query", try await server.call(.GET, "/v1/admin/notifications?status=a%00", headers: admin)),
                ("consumption status", try await server.call(.GET, "/v1/admin/consumption-requests?status=%00", headers: admin)),
                ("negative limit", try await server.call(.GET, "/v1/admin/notifications?limit=-1", headers: admin)),
                ("audit limit", try await server.call(.GET, "/v1/admin/users/nul/audit?limit=-5", headers: admin)),
                ("audit after", try await server.call(.GET, "/v1/admin/users/nul/audit?after=x", headers: admin)),
                (
                    "catalog path",
                    try await server.call(
                        .PUT,
                        "/v1/admin/catalog/products/a%00b",
                        json: ["id": "a\u{0}b", "kind": "consumable", "coins": 1],
                        headers: admin
                    )
                ),
            ]
            for (name, reply) in cases {
                #expect((400..<500).contains(reply.status), "\(name): \(reply.status) \(reply.text.prefix(300))")
                #expect(reply.outcome != "retry", "\(name): a client must not retry this forever")
            }
            #expect(try await server.coins("nul") == 0)

            // 200 spends of one key at once: one debit, 199 repeats of its answer.
            _ = try await server.call(.POST, "/v1/admin/users/racer/wallet/adjust", json: ["amount": 1000, "idempotencyKey": "seed"], headers: admin)
            struct Answer: Sendable {
                var status: Int
                var repeated: Bool?
                var balance: Int?
                var text: String
            }
            let answers = try await withThrowingTaskGroup(of: Answer.self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        let reply = try await server.call(
                            .POST,
                            "/v1/wallet/spend",
                            json: ["amount": 7, "idempotencyKey": "once"],
                            headers: ServerHarness.userHeaders("racer")
                        )
                        return Answer(status: reply.status, repeated: reply["repeated"] as? Bool, balance: reply["balance"] as? Int, text: reply.text)
                    }
                }
                var all: [Answer] = []
                for try await answer in group { all.append(answer) }
                return all
            }
            #expect(answers.allSatisfy { $0.status == 200 }, "\(answers.filter { $0.status != 200 }.map(\.text).prefix(3))")
            #expect(answers.filter { $0.repeated == false }.count == 1)
            #expect(answers.allSatisfy { $0.balance == 993 })
            #expect(try await server.coins("racer") == 993)
        }
    }

    @Test("item 12: a receipt that is not one is refused here, final, without asking Apple")
    func garbageReceipt() async throws {
        try await ServerHarness.run(.sqlite) { server in
            for receipt in ["!!! not base64 !!!", "aGVsbG8gd29ybGQ=", "", String(repeating: "A", count: 7)] {
                let reply = try await server.call(.POST, "/v1/purchases", json: ["receipt": receipt], headers: ServerHarness.userHeaders("gary"))
                #expect(reply.status == 400, "\(receipt): \(reply.text)")
                #expect(reply.code == "malformed_receipt")
                #expect(reply.outcome == "rejected")
            }
            let metrics = try await server.call(.GET, "/metrics")
            #expect(!metrics.text.contains("storekeeper_apple_requests_total{endpoint=\"verifyReceipt\""), "Apple was never asked")
        }
    }

    @Test("item 13: refused webhook bodies are counted, not stored", arguments: TestDatabase.available)
    func refusedBodiesAreCapped(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let filler = String(repeating: "x", count: 60 * 1024)
            for index in 0..<120 {
                let body = index % 2 == 0 ? "{\"signedPayload\":\"\(index)\(filler)\"}" : "not json \(index) \(filler)"
                let reply = try await server.call(.POST, "/apple/notifications/v2", raw: body)
                #expect((400..<500).contains(reply.status), "\(reply.text.prefix(200))")
            }
            try await server.withSideConnection { db in
                try await db.withSession { sql in
                    let stored = try await sql.raw("SELECT COUNT(*) AS n FROM notifications").first()?.decode(column: "n", as: Int64.self)
                    #expect(stored == 0, "no refused body is kept in the inbox")
                    let bytes = try await sql.raw("SELECT COALESCE(SUM(LENGTH(prefix)), 0) AS n FROM notification_refusals").first()?
                        .decode(column: "n", as: Int64.self)
                    #expect((bytes ?? .max) < 4096, "a short prefix per source and reason, not 7 MB")
                }
            }
            let refusals = try await server.call(.GET, "/v1/admin/notifications/refusals", headers: ServerHarness.adminHeaders)
            #expect(refusals.status == 200, "\(refusals.text)")
            let items = refusals["refusals"] as? [[String: Any]] ?? []
            #expect(items.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == 120, "\(refusals.text.prefix(600))")
            #expect(items.allSatisfy { ($0["source"] as? String)?.isEmpty == false && ($0["digest"] as? String)?.count == 64 })
        }
    }

    @Test("item 15: a refusal is counted once, and the database file is private")
    func countedOnceAndPrivate() async throws {
        try await ServerHarness.run(.sqlite) { server in
            let account = try await server.store.createAccount().id
            let fresh = try await server.store.purchase(productId: Self.coins, account: account)
            _ = try await server.submit(BadInputTests.tampered(fresh.signedTransaction), headers: ServerHarness.userHeaders("cora"))
            let metrics = try await server.call(.GET, "/metrics")
            #expect(metrics.text.contains("storekeeper_refusals_total{code=\"invalid_signature\"} 1\n"), "\(metrics.text)")
            guard case .sqlite(let path) = server.databaseConfiguration else {
                Issue.record("not SQLite")
                return
            }
            for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
                let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
                #expect(mode == 0o600, "\(file): \(String(mode ?? 0, radix: 8))")
            }
        }
    }

    @Test("item 19: catch-up includes a notification signed at its window's end, and looks back 180 days at first", arguments: TestDatabase.available)
    func catchUpWindow(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let (account, token) = try await server.newCustomer("cody", product: PurchaseFlowTests.chapter)
            _ = try await server.store.purchase(productId: PurchaseFlowTests.chapter, account: account, appAccountToken: token)
            // 100 days on, the first catch-up ever still finds the purchase's notification.
            try await server.store.advance(by: 100 * 86_400)
            #expect(try await server.runJob("catch-up") == 1)
            let (account2, token2) = try await server.newCustomer("cody2", product: PurchaseFlowTests.chapter)
            _ = try await server.store.purchase(productId: PurchaseFlowTests.chapter, account: account2, appAccountToken: token2)
            // The lease is given back and the cursor saved by the time the run answers (not by a task left behind).
            try await server.withSideConnection { db in
                try await db.withSession { sql in
                    let rows = try await sql.raw("SELECT name, lease_owner, cursor FROM job_state WHERE name LIKE 'catch-up:%'").all()
                    #expect(!rows.isEmpty)
                    for row in rows {
                        #expect(try row.decode(column: "lease_owner", as: String?.self) == nil)
                        #expect(try row.decode(column: "cursor", as: String?.self) != nil)
                    }
                }
            }
            // Signed exactly now: a run as of now includes it.
            #expect(try await server.runJob("catch-up") == 1)
            try await server.runJob("process-notifications")
            #expect(try await server.activeEntitlements("cody2", at: await server.simulatedNow).contains("chapter.2"))
        }
    }

    @Test("item 20: support assigns a parked purchase to a user, audited", arguments: TestDatabase.available)
    func assignPending(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let account = try await server.store.createAccount().id
            let backend = [("X-API-Key", ServerHarness.apiKey)]
            let jws = try await server.store.purchase(productId: PurchaseFlowTests.chapter, account: account)
            #expect(try await server.submit(jws.signedTransaction, headers: backend).status == 202)
            let coinsBought = try await server.store.purchase(productId: Self.coins, account: account)
            let receipt = try await server.receipt(account: account)
            let legacy = try await server.call(
                .POST,
                "/v1/purchases",
                json: ["receipt": receipt, "transactionId": coinsBought.transaction.transactionId!],
                headers: backend
            )
            #expect(legacy.outcome == "retry", "\(legacy.text)")

            for id in [jws.transaction.transactionId!, coinsBought.transaction.transactionId!] {
                let missing = try await server.call(
                    .POST,
                    "/v1/admin/pending/\(id)/assign",
                    json: ["reason": "ticket 42"],
                    headers: ServerHarness.adminHeaders
                )
                #expect(missing.status == 400, "a user is required: \(missing.text)")
                let assigned = try await server.call(
                    .POST,
                    "/v1/admin/pending/\(id)/assign",
                    json: ["userId": "gina", "reason": "ticket 42"],
                    headers: ServerHarness.adminHeaders
                )
                #expect(assigned.status == 200, "\(assigned.text)")
                #expect(assigned.delivery?["userId"] as? String == "gina")
                let twice = try await server.call(
                    .POST,
                    "/v1/admin/pending/\(id)/assign",
                    json: ["userId": "hal", "reason": "again"],
                    headers: ServerHarness.adminHeaders
                )
                #expect(twice.status == 409, "\(twice.text)")
            }
            #expect(server.entitlement("chapter.2", of: try await server.me("gina"))?.active == true)
            #expect(try await server.coins("gina") == 60)
            let audit = try await server.audit("gina").filter { $0.action == "transaction.assigned" }
            #expect(audit.count == 2)
            #expect(
                audit.allSatisfy {
                    $0.cause.hasPrefix("admin:ops") && $0.detail?.contains("ticket 42") == true
                }
            )
            let pending = try await server.call(.GET, "/v1/admin/pending", headers: ServerHarness.adminHeaders)
            #expect((pending["pending"] as? [Any])?.isEmpty == true, "\(pending.text)")
            let unknown = try await server.call(
                .POST,
                "/v1/admin/pending/nope/assign",
                json: ["userId": "gina"],
                headers: ServerHarness.adminHeaders
            )
            #expect(unknown.status == 404)
        }
    }

    @Test("item 14: /health fails while the database cannot take a write, and recovers", arguments: TestDatabase.available)
    func healthNeedsAWrite(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let before = try await server.call(.GET, "/health")
            #expect(before.status == 200)
            // Another connection holds the write lock (SQLite) or locks the probe's table (PostgreSQL): reads still work.
            try? await server.withSideConnection { db in
                try await db.withSession { sql in
                    if database == .sqlite {
                        try await sql.raw("BEGIN IMMEDIATE").run()
                    } else {
                        try await sql.raw("BEGIN").run()
                        try await sql.raw("LOCK TABLE health_probes IN ACCESS EXCLUSIVE MODE").run()
                    }
                    let health = try await server.call(.GET, "/health")
                    #expect(health.status == 503, "\(health.text)")
                    #expect(health["database"] as? String == "failing")
                    let live = try await server.call(.GET, "/health/live")
                    #expect(live.status == 200)
                    try await sql.raw("ROLLBACK").run()
                }
            }
            let after = try await server.call(.GET, "/health")
            #expect(after.status == 200, "healthy again once the lock is gone")
        }
    }
}
