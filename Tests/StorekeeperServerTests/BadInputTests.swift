import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import Foundation
import NIOHTTP1
import SQLKit
import StorekeeperAPI
import StorekeeperCore
import StorekeeperServer
import StorekeeperStorage
import Testing

/// Every kind of bad input gets a 4xx naming the problem, a metric, and changes nobody's balance; a database
/// failure is a 5xx that commits nothing.
@Suite("Bad input end to end")
struct BadInputTests {
    /// `payload` with one field changed and the original signature kept.
    static func tampered(_ jws: String) -> String {
        let parts = jws.split(separator: ".").map(String.init)
        var payload = String(decoding: Base64URL.decode(parts[1])!, as: UTF8.self)
        payload = payload.replacingOccurrences(of: "coins.60", with: "coins.300")
        return [parts[0], Base64URL.encode(Array(payload.utf8)), parts[2]].joined(separator: ".")
    }

    // MARK: Tests

    @Test("bad input is refused with a named 4xx and no balance changes", arguments: TestDatabase.available)
    func badInput(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let account = try await server.store.createAccount().id
            let user = ServerHarness.userHeaders("nina")
            let (_, good) = try await server.orderAndBuy(PurchaseFlowTests.coins, user: "nina", account: account)
            #expect(try await server.submit(good.signedTransaction, headers: user).outcome == "delivered")
            let auditBefore = try await server.audit("nina").count

            let untrustedChain = try AppStoreSigningChain.generate(.init(name: "Forger"))
            let forgerStore = try SimulatedAppStore(
                catalog: try ServerHarness.simulatorCatalog(),
                signingChain: untrustedChain,
                seed: 3,
                start: Date()
            )
            let forgerAccount = try await forgerStore.createAccount().id
            let forged = try await forgerStore.purchase(productId: PurchaseFlowTests.coins, account: forgerAccount)
            let fresh = try await server.store.purchase(productId: PurchaseFlowTests.coins, account: account)

            let cases: [(String, Int, String, ServerHarness.Reply)] = [
                (
                    "malformed JSON", 400, "malformed_json",
                    try await server.call(.POST, "/v1/purchases", raw: "{\"signedTransaction\": ", headers: user)
                ),
                ("empty body", 400, "malformed_json", try await server.call(.POST, "/v1/purchases", raw: "", headers: user)),
                (
                    "wrong field type", 400, "malformed_json",
                    try await server.call(.POST, "/v1/purchases", json: ["signedTransaction": 42], headers: user)
                ),
                ("nothing to verify", 400, "missing_purchase", try await server.call(.POST, "/v1/purchases", json: ["orderId": "x"], headers: user)),
                ("tampered payload", 422, "invalid_signature", try await server.submit(Self.tampered(fresh.signedTransaction), headers: user)),
                ("truncated JWS", 400, "malformed", try await server.submit(String(fresh.signedTransaction.prefix(300)), headers: user)),
                ("untrusted chain", 422, "invalid_certificate", try await server.submit(forged.signedTransaction, headers: user)),
                (
                    "oversized body", 413, "body_too_large",
                    try await server.call(
                        .POST,
                        "/v1/purchases",
                        raw: "{\"receipt\":\"" + String(repeating: "A", count: 2 << 20) + "\"}",
                        headers: user
                    )
                ),
                ("no credentials", 401, "unauthenticated", try await server.submit(fresh.signedTransaction, headers: [])),
                (
                    "forged user token", 401, "invalid_token",
                    try await server.submit(
                        fresh.signedTransaction,
                        headers: [("Authorization", "Bearer " + ServerHarness.token("nina").dropLast(3) + "abc")]
                    )
                ),
                (
                    "unknown API key", 401, "invalid_api_key",
                    try await server.submit(fresh.signedTransaction, headers: [("X-API-Key", "nope-nope-nope-nope")])
                ),
                (
                    "order for unknown product", 404, "unknown_product",
                    try await server.call(.POST, "/v1/orders", json: ["productId": "com.example.nothing"], headers: user)
                ),
                ("admin route without key", 401, "admin_key_required", try await server.call(.GET, "/v1/admin/users/nina/audit", headers: user)),
                ("unknown route", 404, "not_found", try await server.call(.GET, "/v1/nothing-here", headers: user)),
            ]
            for (name, status, code, reply) in cases {
                #expect(reply.status == status, "\(name): \(reply.text.prefix(300))")
                #expect(reply.code == code, "\(name): \(reply.text.prefix(300))")
                #expect((reply["message"] as? String)?.isEmpty == false, "\(name) names the problem")
            }
            #expect(try await server.coins("nina") == 60)
            #expect(try await server.audit("nina").count == auditBefore)
            let metrics = try await server.call(.GET, "/metrics")
            #expect(metrics.text.contains("storekeeper_refusals_total{code=\"invalid_signature\"}"))
            #expect(metrics.text.contains("storekeeper_verification_failures_total{reason=\"invalid_certificate\"}"))
            #expect(metrics.text.contains("storekeeper_deliveries_total"))
            #expect(metrics.text.contains("http_server_requests_total"))
        }
    }

    @Test("a product missing from the catalog is kept for recovery, not lost")
    func unknownProduct() async throws {
        let reduced = FileManager.default.temporaryDirectory.appendingPathComponent("catalog-\(UUID().uuidString).json")
        var catalog = try Catalog.load(from: ServerHarness.catalogURL.appendingPathComponent("storekeeper-catalog.json"))
        catalog.products.removeAll { $0.id == PurchaseFlowTests.chapter }
        try JSONEncoder().encode(catalog).write(to: reduced)
        defer { try? FileManager.default.removeItem(at: reduced) }
        try await ServerHarness.run(.sqlite, configure: { $0.catalogFile = reduced.path }) { server in
            let account = try await server.store.createAccount().id
            let purchase = try await server.store.purchase(productId: PurchaseFlowTests.chapter, account: account)
            let reply = try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders("omar"))
            #expect(reply.status == 422)
            #expect(reply.code == "unknown_product")
            #expect(reply.outcome == "retry", "the client keeps the transaction until the catalog knows the product")
            let pending = try await server.call(.GET, "/v1/admin/pending", headers: ServerHarness.adminHeaders)
            #expect((pending["pending"] as? [[String: Any]])?.count == 1)
            #expect(try await server.me("omar").transactions.isEmpty)
        }
    }

    @Test("a JWS or receipt of another app is refused")
    func wrongApp() async throws {
        try await ServerHarness.run(.sqlite, configure: { $0.apps[0].bundleId = "com.example.other" }) { server in
            let account = try await server.store.createAccount().id
            let purchase = try await server.store.purchase(productId: PurchaseFlowTests.coins, account: account)
            let jws = try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders("pia"))
            #expect(jws.status == 422)
            #expect(jws.code == "wrong_app")
            let receipt = try await server.receipt(account: account)
            let legacy = try await server.call(.POST, "/v1/purchases", json: ["receipt": receipt], headers: ServerHarness.userHeaders("pia"))
            #expect(legacy.status == 422, "\(legacy.text)")
            #expect(legacy.code == "invalid_receipt")
            #expect(try await server.coins("pia") == 0)
        }
    }

    @Test("a product taken off sale is refused at order time, and still delivered if Apple charged it")
    func offSale() async throws {
        try await ServerHarness.run(.sqlite) { server in
            let account = try await server.store.createAccount().id
            let earlier = try await server.store.purchase(productId: PurchaseFlowTests.chapter, account: account)
            let put = try await server.call(
                .PUT,
                "/v1/admin/catalog/products/\(PurchaseFlowTests.chapter)",
                json: ["id": PurchaseFlowTests.chapter, "kind": "nonConsumable", "entitlement": "chapter.2", "onSale": false],
                headers: ServerHarness.adminHeaders
            )
            #expect(put.status == 200, "\(put.text)")
            let order = try await server.call(
                .POST,
                "/v1/orders",
                json: ["productId": PurchaseFlowTests.chapter],
                headers: ServerHarness.userHeaders("quinn")
            )
            #expect(order.status == 409)
            #expect(order.code == "product_not_for_sale")
            #expect(try await server.submit(earlier.signedTransaction, headers: ServerHarness.userHeaders("quinn")).outcome == "delivered")
            let invalid = try await server.call(
                .PUT,
                "/v1/admin/catalog/products/x",
                json: ["id": "x", "kind": "consumable"],
                headers: ServerHarness.adminHeaders
            )
            #expect(invalid.status == 422)
            #expect(invalid.code == "invalid_catalog")
        }
    }

    @Test("sandbox purchases are delivered and flagged, or refused where production forbids them")
    func sandboxPolicy() async throws {
        try await ServerHarness.run(.sqlite, environment: .production) { server in
            let account = try await server.store.createAccount().id
            let (_, purchase) = try await server.orderAndBuy(PurchaseFlowTests.chapter, user: "rosa", account: account)
            let reply = try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders("rosa"))
            #expect(reply.delivery?["sandbox"] as? Bool == false)
            #expect(reply.delivery?["environment"] as? String == "Production")
        }
        try await ServerHarness.run(.sqlite, configure: { $0.apps[0].allowSandbox = false }) { server in
            let account = try await server.store.createAccount().id
            let purchase = try await server.store.purchase(productId: PurchaseFlowTests.chapter, account: account)
            let reply = try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders("rosa"))
            #expect(reply.status == 422)
            #expect(reply.code == "wrong_environment" || reply.code == "sandbox_not_allowed", "\(reply.text)")
        }
    }

    @Test("a database failure during a purchase is a 5xx that commits nothing", arguments: TestDatabase.available)
    func databaseFailure(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let account = try await server.store.createAccount().id
            let purchase = try await server.store.purchase(productId: PurchaseFlowTests.coins, account: account)
            try await server.withSideConnection { db in
                try await db.withSession { try await $0.raw("ALTER TABLE wallet_entries RENAME TO wallet_entries_away").run() }
            }
            let failed = try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders("sam"))
            #expect(failed.status == 500, "\(failed.text)")
            #expect(failed.code == "internal")
            #expect(failed.outcome == "retry")
            try await server.withSideConnection { db in
                try await db.withSession { try await $0.raw("ALTER TABLE wallet_entries_away RENAME TO wallet_entries").run() }
            }
            #expect(try await server.me("sam").transactions.isEmpty, "the failed delivery rolled back")
            let retried = try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders("sam"))
            #expect(retried.delivery?["alreadyDelivered"] as? Bool == false)
            #expect(try await server.coins("sam") == 60)
            let health = try await server.call(.GET, "/health")
            #expect(health.status == 200)
            #expect(health["database"] as? String == "ok")
        }
    }
}
