import AppStoreSimulator
import AppStoreWire
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SwiftASN1
import Testing

/// Details of the simulator's App Store Server API where it must answer as Apple does: query parsing, refusals and
/// what the control API shows of what it received.
@Suite struct ServerAPIConformanceTests {
    typealias H = SimulatorHarness
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
    static let coins = "com.example.storekeeper.coins.60"

    let apiKey = P256.Signing.PrivateKey()

    func application(store: SimulatedAppStore) async throws -> some ApplicationProtocol {
        let apple = SimulatorServer.AppleSide(
            apiKeys: ["KEY1": apiKey.publicKey],
            issuerId: Self.issuerId,
            receiptIdentity: try ReceiptFixtures.identity()
        )
        return await SimulatorServer.buildApplication(store: store, rootPEM: try store.signingRoot.serializeAsPEM().pemString, apple: apple, port: 0)
    }

    var authorization: HTTPFields {
        get throws {
            let token = try AppStoreAPITokenGenerator(
                privateKey: apiKey,
                keyId: "KEY1",
                issuerId: Self.issuerId,
                bundleId: "com.example.storekeeper"
            ).makeToken(now: Date())
            return [.authorization: "Bearer \(token)", .contentType: "application/json"]
        }
    }

    func object(_ response: TestResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
    }

    func transactionIds(_ response: TestResponse) throws -> [String] {
        let signed = try #require(try object(response)["signedTransactions"] as? [String])
        var ids: [String] = []
        for jws in signed {
            ids.append(try SignedDataVerifier.decodeUnverified(jws, as: JWSTransactionDecodedPayload.self).payload.transactionId ?? "")
        }
        return ids
    }

    func errorCode(_ response: TestResponse) throws -> Int? {
        try object(response)["errorCode"] as? Int
    }

    // MARK: Tests

    @Test func booleanQueryParametersIgnoreLetterCase() async throws {
        let h = try await H()
        let account = try await h.store.createAccount()
        let kept = try await h.store.purchase(productId: Self.coins, account: account.id).transaction.transactionId!
        let refunded = try await h.store.purchase(productId: Self.coins, account: account.id).transaction.transactionId!
        try await h.store.decideRefund(transactionId: refunded, approve: true)
        try await application(store: h.store).test(.router) { client in
            // Apple's Python client sends str(True): "True".
            for (value, expected) in [("True", [refunded]), ("true", [refunded]), ("TRUE", [refunded]), ("False", [kept]), ("false", [kept])] {
                try await client.execute(uri: "/inApps/v2/history/\(kept)?revoked=\(value)", method: .get, headers: try authorization) {
                    #expect($0.status == .ok)
                    let ids = try transactionIds($0)
                    #expect(ids == expected, "revoked=\(value)")
                }
            }
            try await client.execute(uri: "/inApps/v1/history/\(kept)?revoked=True", method: .get, headers: try authorization) {
                let ids = try transactionIds($0)
                #expect(ids == [refunded])
            }
            try await client.execute(uri: "/inApps/v2/history/\(kept)?revoked=maybe", method: .get, headers: try authorization) {
                #expect($0.status == .badRequest)
                let code = try errorCode($0)
                #expect(code == 4_000_030)
            }
        }
    }

    @Test func refusedTokensGetApplesBare401() async throws {
        let h = try await H()
        let account = try await h.store.createAccount()
        let id = try await h.store.purchase(productId: Self.coins, account: account.id).transaction.transactionId!
        try await application(store: h.store).test(.router) { client in
            let forged = try AppStoreAPITokenGenerator(
                privateKey: P256.Signing.PrivateKey(),
                keyId: "KEY1",
                issuerId: Self.issuerId,
                bundleId: "com.example.storekeeper"
            ).makeToken(now: Date())
            for headers: HTTPFields in [[:], [.authorization: "Bearer \(forged)"], [.authorization: "Bearer not.a.jwt"]] {
                try await client.execute(uri: "/inApps/v1/transactions/\(id)", method: .get, headers: headers) {
                    #expect($0.status == .unauthorized)
                    // Apple's 401 has no body and no error code.
                    #expect($0.body.readableBytes == 0)
                }
            }
        }
    }

    @Test func testNotificationNeedsANotificationURL() async throws {
        let h = try await H()
        try await application(store: h.store).test(.router) { client in
            try await client.execute(uri: "/inApps/v1/notifications/test", method: .post, headers: try authorization) {
                #expect($0.status == .notFound)
                let body = try object($0)
                #expect(body["errorCode"] as? Int == 4_040_007)
                #expect(body["errorMessage"] is String)
            }
            #expect(await h.store.sentNotifications().isEmpty)
            // Once a delivery target is configured (NotificationDeliveryService runs), Apple sends the TEST.
            await h.store.setDeliversNotifications(true)
            let token = try await client.execute(uri: "/inApps/v1/notifications/test", method: .post, headers: try authorization) {
                #expect($0.status == .ok)
                return try object($0)["testNotificationToken"] as? String
            }
            try await client.execute(
                uri: "/inApps/v1/notifications/test/\(try #require(token))",
                method: .get,
                headers: try authorization
            ) { #expect($0.status == .ok) }
        }
        #expect(await h.store.sentNotifications().map(\.type) == [.test])
    }

    @Test func consumptionAnswersAreListedUnderControl() async throws {
        let h = try await H()
        let account = try await h.store.createAccount()
        let first = try await h.store.purchase(productId: Self.coins, account: account.id).transaction.transactionId!
        let second = try await h.store.purchase(productId: Self.coins, account: account.id).transaction.transactionId!
        let v2 =
            #"{"customerConsented":true,"sampleContentProvided":false,"deliveryStatus":"DELIVERED","consumptionPercentage":25000,"refundPreference":"GRANT_PRORATED"}"#
        let v1 =
            #"{"customerConsented":true,"consumptionStatus":2,"platform":1,"sampleContentProvided":true,"deliveryStatus":0,"appAccountToken":"","accountTenure":3,"playTime":2,"lifetimeDollarsPurchased":2,"lifetimeDollarsRefunded":1,"userStatus":1,"refundPreference":3}"#
        try await application(store: h.store).test(.router) { client in
            try await client.execute(uri: "/control/consumption", method: .get) {
                #expect(String(buffer: $0.body) == "[]")
            }
            try await client.execute(
                uri: "/inApps/v2/transactions/consumption/\(first)",
                method: .put,
                headers: try authorization,
                body: ByteBuffer(string: v2)
            ) { #expect($0.status == .accepted) }
            try await client.execute(
                uri: "/inApps/v1/transactions/consumption/\(second)",
                method: .put,
                headers: try authorization,
                body: ByteBuffer(string: v1)
            ) { #expect($0.status == .accepted) }
            // A refused answer (no consent) is not one Apple received.
            try await client.execute(
                uri: "/inApps/v2/transactions/consumption/\(first)",
                method: .put,
                headers: try authorization,
                body: ByteBuffer(string: v2.replacingOccurrences(of: "\"customerConsented\":true", with: "\"customerConsented\":false"))
            ) { #expect($0.status == .badRequest) }

            let now = Int64((await h.store.currentDate.timeIntervalSince1970 * 1000).rounded())
            let listed = try await client.execute(uri: "/control/consumption", method: .get) { response in
                #expect(response.status == .ok)
                return try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [[String: Any]])
            }
            #expect(listed.map { $0["transactionId"] as? String } == [first, second])
            #expect(listed.map { $0["endpoint"] as? String } == ["v2", "v1"])
            #expect(listed.allSatisfy { ($0["receivedAt"] as? Int64) == now })
            let firstBody = try #require(listed.first?["body"] as? [String: Any])
            #expect(firstBody["refundPreference"] as? String == "GRANT_PRORATED")
            #expect(firstBody["consumptionPercentage"] as? Int == 25_000)
            let secondBody = try #require(listed.last?["body"] as? [String: Any])
            #expect(secondBody["playTime"] as? Int == 2)

            try await client.execute(uri: "/control/consumption?transactionId=\(second)", method: .get) { response in
                let only = try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [[String: Any]])
                #expect(only.map { $0["transactionId"] as? String } == [second])
            }
        }
        #expect(await h.store.receivedConsumptionAnswers().count == 2)
    }
}
