import AppStoreSimulator
import AppStoreWire
import AsyncHTTPClient
import Foundation
import NIOHTTP1
import SQLKit
import StorekeeperServer
import StorekeeperStorage
import Testing

/// Apple's notifications are stored durably before the 200, once, and refused payloads are recorded.
@Suite("Notification inbox end to end")
struct NotificationInboxTests {
    static let sharedSecret = "inbox-shared-secret-0123"

    func inbox(_ server: ServerHarness, status: String? = nil) async throws -> [[String: Any]] {
        let reply = try await server.call(
            .GET,
            "/v1/admin/notifications" + (status.map { "?status=\($0)" } ?? ""),
            headers: ServerHarness.adminHeaders
        )
        return reply["notifications"] as? [[String: Any]] ?? []
    }

    /// The counted refusals (refused bodies are counted, never stored whole).
    func refusals(_ server: ServerHarness) async throws -> [[String: Any]] {
        let reply = try await server.call(.GET, "/v1/admin/notifications/refusals", headers: ServerHarness.adminHeaders)
        return reply["refusals"] as? [[String: Any]] ?? []
    }

    // MARK: Tests

    @Test("V2 notifications delivered by the simulator are stored once, duplicates answered 200", arguments: TestDatabase.available)
    func v2Stored(database: TestDatabase) async throws {
        // Stored only: these tests look at the inbox before anything applies it.
        try await ServerHarness.run(database, configure: { $0.lifecycle.processNotifications = false }) { server in
            await server.store.setDeliversNotifications(true)
            let account = try await server.store.createAccount().id
            _ = try await server.store.purchase(productId: PurchaseFlowTests.monthly, account: account)
            _ = try await server.store.purchase(productId: PurchaseFlowTests.coins, account: account)
            let delivery = NotificationDeliveryService(
                store: server.store,
                url: server.serverURL + "/apple/notifications/v2",
                httpClient: .shared
            )
            let sent = await delivery.deliverDue()
            #expect(sent >= 2)
            let stored = try await inbox(server, status: "pending")
            #expect(stored.count == sent)
            let subscribed = try #require(stored.first { $0["notificationType"] as? String == "SUBSCRIBED" })
            #expect(subscribed["originalTransactionId"] as? String != nil)
            // Apple retries and duplicates: the same body again is answered 200 and stored once.
            for notification in await server.store.sentNotifications() {
                let again = try await server.call(.POST, "/apple/notifications/v2", json: ["signedPayload": notification.signedPayload])
                #expect(again.status == 200)
                #expect(again["status"] as? String == "duplicate")
            }
            #expect(try await inbox(server).count == sent)
            // The per-app URL works too.
            let perApp = try await server.call(
                .POST,
                "/apple/notifications/v2/main",
                json: ["signedPayload": await server.store.sentNotifications()[0].signedPayload]
            )
            #expect(perApp.status == 200)
        }
    }

    @Test("a forged or malformed notification is refused 4xx and counted as refused")
    func refused() async throws {
        try await ServerHarness.run(.sqlite) { server in
            let account = try await server.store.createAccount().id
            _ = try await server.store.purchase(productId: PurchaseFlowTests.monthly, account: account)
            let genuine = try #require(await server.store.sentNotifications().first).signedPayload
            let parts = genuine.split(separator: ".").map(String.init)
            var payload = String(decoding: Base64URL.decode(parts[1])!, as: UTF8.self)
            payload = payload.replacingOccurrences(of: "SUBSCRIBED", with: "REFUND")
            let forged = [parts[0], Base64URL.encode(Array(payload.utf8)), parts[2]].joined(separator: ".")
            let reply = try await server.call(.POST, "/apple/notifications/v2", json: ["signedPayload": forged])
            #expect(reply.status == 422)
            #expect(reply.code == "invalid_signature")
            let malformed = try await server.call(.POST, "/apple/notifications/v2", raw: "{\"nope\": 1}")
            #expect(malformed.status == 400)
            let refused = try await refusals(server)
            #expect(refused.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == 2, "\(refused)")
            #expect(Set(refused.compactMap { $0["reason"] as? String }) == ["invalid_signature", "malformed_json"])
            #expect(try await inbox(server).isEmpty)
            let unknownApp = try await server.call(.POST, "/apple/notifications/v2/other", json: ["signedPayload": genuine])
            #expect(unknownApp.status == 404)
        }
    }

    @Test("a storage failure is a 5xx so Apple retries; the retry is stored", arguments: TestDatabase.available)
    func storageFailure(database: TestDatabase) async throws {
        // Stored only: these tests look at the inbox before anything applies it.
        try await ServerHarness.run(database, configure: { $0.lifecycle.processNotifications = false }) { server in
            let account = try await server.store.createAccount().id
            _ = try await server.store.purchase(productId: PurchaseFlowTests.monthly, account: account)
            let signed = try #require(await server.store.sentNotifications().first).signedPayload
            try await server.withSideConnection { db in
                try await db.withSession { try await $0.raw("ALTER TABLE notifications RENAME TO notifications_away").run() }
            }
            let failed = try await server.call(.POST, "/apple/notifications/v2", json: ["signedPayload": signed])
            #expect(failed.status == 500)
            try await server.withSideConnection { db in
                try await db.withSession { try await $0.raw("ALTER TABLE notifications_away RENAME TO notifications").run() }
            }
            let retried = try await server.call(.POST, "/apple/notifications/v2", json: ["signedPayload": signed])
            #expect(retried.status == 200)
            #expect(retried["status"] as? String == "stored")
        }
    }

    @Test("stored V2 bodies share their certificate chains and read back byte for byte", arguments: TestDatabase.available)
    func compactBodies(database: TestDatabase) async throws {
        try await ServerHarness.run(database, configure: { $0.lifecycle.processNotifications = false }) { server in
            let account = try await server.store.createAccount().id
            _ = try await server.store.purchase(productId: PurchaseFlowTests.monthly, account: account)
            _ = try await server.store.purchase(productId: PurchaseFlowTests.coins, account: account)
            let sent = await server.store.sentNotifications()
            #expect(sent.count >= 2)
            var bodies: [String: String] = [:]
            for notification in sent {
                let body = #"{"signedPayload":""# + notification.signedPayload + #""}"#
                let reply = try await server.call(.POST, "/apple/notifications/v2", raw: body)
                #expect(reply.status == 200)
                let payload = try AppStoreJSON.decodePayload(
                    ResponseBodyV2DecodedPayload.self,
                    from: Base64URL.decode(String(notification.signedPayload.split(separator: ".")[1]))!
                )
                bodies[try #require(payload.notificationUUID)] = body
            }
            let expected = bodies
            try await server.withSideConnection { provider in
                let rows = try await provider.withSession { db in
                    try await db.raw("SELECT id, body, body_format FROM notifications").all()
                }
                #expect(rows.count == expected.count)
                for row in rows {
                    let stored = try row.decode(column: "body", as: String.self)
                    let original = try #require(expected[try row.decode(column: "id", as: String.self)])
                    // The chain is stored once, not three times per notification.
                    #expect(try row.decode(column: "body_format", as: String?.self) == CompactNotificationBody.format)
                    #expect(stored.utf8.count * 3 < original.utf8.count)
                }
                let headers = try await provider.withSession { db in
                    try await db.raw("SELECT COUNT(*) AS n FROM notification_headers").first()?.decode(column: "n", as: Int64.self)
                }
                // The notification, transaction and renewal JWS share one chain, hence one header each kind.
                #expect((1...3).contains(headers ?? 0))
            }
            // Read back through the server (admin API) exactly as received.
            let listed = try await inbox(server)
            #expect(listed.count == bodies.count)
            for notification in listed {
                let id = try #require(notification["id"] as? String)
                let detail = try await server.call(.GET, "/v1/admin/notifications/\(id)", headers: ServerHarness.adminHeaders)
                #expect(detail["body"] as? String == bodies[id])
            }
        }
    }

    @Test("V1 notifications need the app's shared secret")
    func v1() async throws {
        try await ServerHarness.run(
            .sqlite,
            configure: {
                $0.apps[0].sharedSecret = Self.sharedSecret
                $0.lifecycle.processNotifications = false
            }
        ) { server in
            await server.store.setDeliversNotifications(true)
            let account = try await server.store.createAccount().id
            _ = try await server.store.purchase(productId: PurchaseFlowTests.monthly, account: account)
            let genuine = NotificationDeliveryService(
                store: server.store,
                url: server.serverURL + "/apple/notifications/v1",
                httpClient: .shared,
                format: .v1(V1NotificationComposer(identity: SharedIdentities.receipts, sharedSecret: Self.sharedSecret))
            )
            #expect(await genuine.deliverDue() == 1)
            let stored = try await inbox(server, status: "pending")
            #expect(stored.count == 1)
            #expect(stored.first?["format"] as? String == "v1")
            #expect(stored.first?["notificationType"] as? String == "INITIAL_BUY")

            _ = try await server.store.purchase(productId: PurchaseFlowTests.yearly, account: account)
            let impostor = NotificationDeliveryService(
                store: server.store,
                url: server.serverURL + "/apple/notifications/v1",
                httpClient: .shared,
                format: .v1(V1NotificationComposer(identity: SharedIdentities.receipts, sharedSecret: "guessed-secret"))
            )
            _ = await impostor.deliverDue()
            #expect(try await inbox(server, status: "pending").count == 1)
            #expect(try await refusals(server).contains { $0["reason"] as? String == "invalid_password" })
        }
    }
}
