import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import SwiftASN1
import Testing
import X509

/// The simulator's device and control API over HTTP.
@Suite struct SimulatorHTTPTests {
    typealias H = SimulatorHarness

    func application(seed: UInt64 = 5) async throws -> (some ApplicationProtocol, SimulatedAppStore) {
        let catalog = try SimulatorCatalog.load(from: H.catalogURL)
        let chain = try AppStoreSigningChain.generate(.init(name: "HTTP Simulator"))
        let store = try SimulatedAppStore(catalog: catalog, signingChain: chain, seed: seed)
        let app = await SimulatorServer.buildApplication(store: store, rootPEM: try chain.rootPEM(), port: 0)
        return (app, store)
    }

    func json(_ object: [String: Any]) throws -> ByteBuffer {
        ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: object))
    }

    func object(_ response: TestResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
    }

    // MARK: Tests

    @Test func purchaseOverHTTPVerifiesWithTheServedRoot() async throws {
        let (app, _) = try await application()
        try await app.test(.live) { client in
            let pem = try await client.execute(uri: "/control/root.pem", method: .get) { String(buffer: $0.body) }
            let verifier = try SignedDataVerifier(
                configuration: .init(
                    bundleId: "com.example.storekeeper",
                    environments: [.sandbox],
                    roots: try TrustedRoots.only([try Certificate(pemEncoded: pem)]),
                    deployment: .development
                )
            )
            let account = try await client.execute(uri: "/device/accounts", method: .post, body: try json([:])) { response in
                #expect(response.status == .created)
                return try object(response)["id"] as? String
            }
            let token = UUID()
            let purchase = try await client.execute(
                uri: "/device/purchases",
                method: .post,
                body: try json([
                    "account": try #require(account), "productId": H.monthly, "appAccountToken": token.uuidString,
                ])
            ) { response in
                #expect(response.status == .created)
                return try object(response)
            }
            let signed = try #require(purchase["signedTransaction"] as? String)
            let transaction = try await verifier.verifyTransaction(signed)
            #expect(transaction.productId == H.monthly)
            #expect(transaction.appAccountToken == token.uuidString.lowercased())

            _ = try await client.execute(uri: "/control/clock/advance", method: .post, body: try json(["period": "P1M"])) {
                #expect($0.status == .ok)
            }
            let notifications = try await client.execute(uri: "/control/notifications", method: .get) { response in
                try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [[String: Any]])
            }
            #expect(notifications.map { $0["notificationType"] as? String } == ["SUBSCRIBED", "DID_RENEW"])
            for notification in notifications {
                _ = try await verifier.verifyNotification(try #require(notification["signedPayload"] as? String))
            }
            let truth = try await client.execute(uri: "/control/truth?appAccountToken=\(token.uuidString)", method: .get) {
                try object($0)
            }
            let entitlements = try #require(truth["entitlements"] as? [[String: Any]])
            #expect(entitlements.first?["productId"] as? String == H.monthly)
        }
    }

    @Test func refusalsAreJSONErrorsNamingTheProblem() async throws {
        let (app, _) = try await application()
        try await app.test(.router) { client in
            try await client.execute(
                uri: "/device/purchases",
                method: .post,
                body: try json(["account": "nobody@example.com", "productId": H.monthly])
            ) { response in
                #expect(response.status == .notFound)
                let body = try object(response)
                #expect(body["error"] as? String == "not_found")
                #expect((body["message"] as? String)?.contains("nobody@example.com") == true)
            }
            try await client.execute(uri: "/device/purchases", method: .post, body: ByteBuffer(string: "{not json")) {
                #expect($0.status == .badRequest)
                let error = try object($0)["error"] as? String
                #expect(error == "malformed_body")
            }
            try await client.execute(uri: "/control/clock/advance", method: .post, body: try json(["period": "P1Q"])) {
                #expect($0.status == .badRequest)
            }
            let account = try await client.execute(uri: "/device/accounts", method: .post, body: try json([:])) {
                try object($0)["id"] as? String
            }
            try await client.execute(
                uri: "/device/purchases",
                method: .post,
                body: try json(["account": try #require(account), "productId": "com.example.storekeeper.chapter.2"])
            ) { #expect($0.status == .created) }
            try await client.execute(
                uri: "/device/purchases",
                method: .post,
                body: try json(["account": try #require(account), "productId": "com.example.storekeeper.chapter.2"])
            ) {
                #expect($0.status == .conflict)
                let error = try object($0)["error"] as? String
                #expect(error == "not_allowed")
            }
        }
    }

    @Test func appLevelNotificationsAreSentOnRequest() async throws {
        let (app, store) = try await application()
        try await app.test(.live) { client in
            let account = try await client.execute(uri: "/device/accounts", method: .post, body: try json([:])) { try object($0)["id"] as? String }
            let sent = try await client.execute(
                uri: "/control/notifications",
                method: .post,
                body: try json(["type": "RESCIND_CONSENT", "account": try #require(account)])
            ) { response in
                #expect(response.status == .created)
                return try object(response)["notificationUUID"] as? String
            }
            let last = try #require(await store.sentNotifications().last)
            #expect(last.notificationUUID == sent)
            #expect(last.type == .rescindConsent)
            #expect(last.payload.appData?.signedAppTransactionInfo != nil)
            try await client.execute(
                uri: "/control/notifications",
                method: .post,
                body: try json(["type": "EXTERNAL_PURCHASE_TOKEN", "subtype": "CREATED", "externalPurchaseId": "SANDBOX_1"])
            ) { #expect($0.status == .created) }
            #expect(await store.sentNotifications().last?.payload.externalPurchaseToken?.externalPurchaseId == "SANDBOX_1")
            for (body, status, code) in [
                (["type": "lower case"], HTTPResponse.Status.badRequest, "bad_type"),
                (["type": "EXTERNAL_PURCHASE_TOKEN"], .badRequest, "token_required"),
                (["type": "RESCIND_CONSENT"], .badRequest, "account_required"),
                (["type": "METADATA_UPDATE", "transactionId": "404"], .notFound, nil),
            ] as [([String: String], HTTPResponse.Status, String?)] {
                try await client.execute(uri: "/control/notifications", method: .post, body: try json(body)) { response in
                    #expect(response.status == status, "\(body)")
                    if let code { #expect((try? object(response))?["error"] as? String == code) }
                }
            }
        }
    }

    @Test func percentEncodedPathParametersAreDecoded() async throws {
        let (app, store) = try await application()
        try await app.test(.router) { client in
            let account = try #require(
                try await client.execute(uri: "/device/accounts", method: .post, body: try json([:])) { try object($0)["id"] as? String }
            )
            #expect(account.contains("@"))
            let encoded = try #require(account.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            #expect(encoded.contains("%40"))
            try await client.execute(
                uri: "/device/purchases",
                method: .post,
                body: try json(["account": account, "productId": H.monthly])
            ) { #expect($0.status == .created) }
            try await client.execute(uri: "/device/accounts/\(encoded)/transactions", method: .get) { response in
                #expect(response.status == .ok)
                let signed = try object(response)["signedTransactions"] as? [String]
                #expect(signed?.count == 1)
            }
            try await client.execute(uri: "/device/accounts/\(encoded)/billing", method: .post, body: try json(["fails": true])) {
                #expect($0.status == .noContent)
            }
            try await client.execute(uri: "/control/truth?account=\(encoded)", method: .get) { #expect($0.status == .ok) }
            // A malformed escape is the client's mistake, not an unknown account.
            try await client.execute(uri: "/device/accounts/sandbox%ZZ/transactions", method: .get) {
                #expect($0.status == .badRequest)
            }
        }
        #expect(await store.account("sandbox-1@storekeeper.test")?.billingFails == true)
    }

    @Test func refundFlowThroughTheControlAPI() async throws {
        let (app, store) = try await application()
        try await app.test(.router) { client in
            let account = try await client.execute(uri: "/device/accounts", method: .post, body: try json([:])) {
                try object($0)["id"] as? String
            }
            let purchase = try await client.execute(
                uri: "/device/purchases",
                method: .post,
                body: try json(["account": try #require(account), "productId": "com.example.storekeeper.coins.60"])
            ) { try object($0) }
            let id = try #require((purchase["transaction"] as? [String: Any])?["transactionId"] as? String)
            try await client.execute(
                uri: "/device/transactions/\(id)/refund-request",
                method: .post,
                body: try json(["reason": "LEGAL"])
            ) { #expect($0.status == .accepted) }
            try await client.execute(uri: "/control/refunds/\(id)/decide", method: .post, body: try json(["approve": true])) {
                #expect($0.status == .noContent)
            }
        }
        let types = await store.sentNotifications().map(\.type)
        #expect(types == [.oneTimeCharge, .consumptionRequest, .refund])
        #expect(await store.sentNotifications()[1].payload.data?.consumptionRequestReason == .legal)
    }
}
