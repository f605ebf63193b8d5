import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperServer
import Testing

/// Issue 19, item 3: the notification types Apple added — consent withdrawn for a minor, external purchase tokens,
/// the Advanced Commerce messages, one-time charges — and types Apple has not invented yet, each produced by the
/// simulator, verified, stored and applied (or recorded) by the server.
@Suite("Apple's newer notification types")
struct AppNotificationTests {
    @Test("RESCIND_CONSENT: the install's signed app transaction is verified, its users told, nothing taken back", arguments: TestDatabase.available)
    func rescindConsent(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (account, token) = try await server.newCustomer("minor", product: PurchaseFlowTests.coins)
            let bought = try await store.purchase(productId: PurchaseFlowTests.coins, account: account, appAccountToken: token)
            try await server.deliverAndApply()
            #expect(try await server.coins("minor") == 60)
            let install = try #require(bought.transaction.appTransactionId)
            let uuid = try await store.rescindConsent(account: account)
            try await server.deliverAndApply()

            let admin = try server.api(ServerHarness.adminHeaders)
            let stored = try await admin.adminGetNotification(path: .init(id: uuid)).ok.body.json
            #expect(stored.value1.notificationType == "RESCIND_CONSENT")
            #expect(stored.value1.status == .processed)
            let audit = try await server.audit("minor")
            let entry = try #require(audit.first { $0.action == "consent.rescinded" })
            #expect(entry.subject == install)
            let events = try await admin.adminListEvents(query: .init(userId: "minor")).ok.body.json.events
            let event = try #require(events.last)
            #expect(event._type == "consent.rescinded")
            #expect(event.details.additionalProperties["appTransactionId"] == install)
            #expect(event.details.additionalProperties["notificationId"] == uuid)
            #expect(try await server.coins("minor") == 60, "Apple refunded nothing; Storekeeper takes nothing back")

            // Another install's customer hears nothing.
            let (other, otherToken) = try await server.newCustomer("adult", product: PurchaseFlowTests.coins)
            _ = try await store.purchase(productId: PurchaseFlowTests.coins, account: other, appAccountToken: otherToken)
            try await server.deliverAndApply()
            #expect(try await server.audit("adult").contains { $0.action == "consent.rescinded" } == false)
        }
    }

    @Test("a RESCIND_CONSENT whose app transaction was not signed by Apple is refused and stores nothing")
    func forgedAppTransaction() async throws {
        try await ServerHarness.run(.sqlite) { server in
            let account = try await server.store.createAccount().id
            _ = try await server.store.rescindConsent(account: account)
            let genuine = try #require(await server.store.sentNotifications().last)
            // The same message, its app transaction signed by someone else's chain, the outer body re-signed by the
            // simulator: only the inner signature is wrong.
            let forger = try AppStoreSigningChain.generate(.init(name: "Forger"))
            var payload = genuine.payload
            let inner = try SignedDataVerifier.decodeUnverifiedPayload(
                try #require(payload.appData?.signedAppTransactionInfo),
                as: AppTransaction.self
            )
            payload.appData?.signedAppTransactionInfo = try forger.signer().sign(inner)
            payload.notificationUUID = UUID().uuidString.lowercased()
            let signed = try SharedIdentities.chain.signer().sign(payload)
            let reply = try await server.call(.POST, "/apple/notifications/v2", json: ["signedPayload": signed])
            #expect(reply.status >= 400 && reply.status < 500, "\(reply.text)")
            #expect(reply["code"] as? String == "invalid_certificate", "the inner chain, not the body, is refused")
            let admin = try server.api(ServerHarness.adminHeaders)
            let listed = try await admin.adminListNotifications(query: .init()).ok.body.json.notifications
            #expect(!listed.contains { $0.id == payload.notificationUUID })
        }
    }

    @Test("external purchase tokens, Advanced Commerce messages and unknown types are stored and listed, never dead")
    func recordedTypes() async throws {
        try await ServerHarness.run(.sqlite) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (account, token) = try await server.newCustomer("commerce", product: PurchaseFlowTests.monthly)
            let bought = try await store.purchase(productId: PurchaseFlowTests.monthly, account: account, appAccountToken: token)
            try await server.deliverAndApply()
            let id = try #require(bought.transaction.transactionId)
            var sent: [String: String] = [:]
            for subtype in [Subtype.unreported, .activeTokenReminder, .created] {
                sent[try await store.externalPurchaseToken(subtype, id: "SANDBOX_" + subtype.rawValue)] =
                    "EXTERNAL_PURCHASE_TOKEN/" + subtype.rawValue
            }
            for type in [NotificationTypeV2.metadataUpdate, .migration, .priceChange, "SOMETHING_APPLE_ADDS_IN_2027"] {
                sent[try await store.sendNotification(type, transactionId: id)] = type.rawValue
            }
            sent[try await store.sendNotification("APP_LEVEL_NEWCOMER")] = "APP_LEVEL_NEWCOMER"
            try await server.deliverAndApply()
            let admin = try server.api(ServerHarness.adminHeaders)
            let listed = try await admin.adminListNotifications(query: .init(limit: 100)).ok.body.json.notifications
            for (uuid, kind) in sent {
                let item = try #require(listed.first { $0.id == uuid }, "\(kind) not stored")
                #expect(item.status == .processed, "\(kind): \(item.status) \(item.lastError ?? "")")
                #expect(([item.notificationType, item.subtype].compactMap { $0 }).joined(separator: "/") == kind)
            }
            #expect(try await admin.adminListNotifications(query: .init(status: .dead)).ok.body.json.notifications.isEmpty)
            #expect(try await server.activeEntitlements("commerce", at: await server.simulatedNow).contains("membership"), "no effect")
        }
    }

    @Test("ONE_TIME_CHARGE delivers a purchase the app never submitted")
    func oneTimeCharge() async throws {
        try await ServerHarness.run(.sqlite) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (account, token) = try await server.newCustomer("silent", product: PurchaseFlowTests.coins)
            _ = try await store.purchase(productId: PurchaseFlowTests.coins, account: account, appAccountToken: token)
            #expect(await store.sentNotifications().last?.type == .oneTimeCharge)
            #expect(try await server.coins("silent") == 0, "the app never sent it")
            try await server.deliverAndApply()
            #expect(try await server.coins("silent") == 60)
            let events = try await server.api(ServerHarness.adminHeaders).adminListEvents(query: .init(userId: "silent")).ok.body.json.events
            #expect(events.contains { $0._type == "purchase.delivered" })
        }
    }
}
