import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Promotional offers and eligibility decisions signed by AppStoreWire are accepted at purchase; forged,
/// replayed or mismatched ones are refused, as the App Store does.
@Suite struct SignedOfferTests {
    typealias H = SimulatorHarness
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"

    func withApp(_ body: @Sendable @escaping (any TestClientProtocol, P256.Signing.PrivateKey) async throws -> Void) async throws {
        let catalog = try SimulatorCatalog.load(from: H.catalogURL)
        let chain = try AppStoreSigningChain.generate()
        let store = try SimulatedAppStore(catalog: catalog, signingChain: chain, seed: 4)
        let key = P256.Signing.PrivateKey()
        let apple = SimulatorServer.AppleSide(
            apiKeys: ["OFFERKEY": key.publicKey],
            issuerId: Self.issuerId,
            receiptIdentity: try ReceiptSigningIdentity.generate()
        )
        let app = await SimulatorServer.buildApplication(store: store, rootPEM: try chain.rootPEM(), apple: apple, port: 0)
        try await app.test(.router) { client in try await body(client, key) }
    }

    func post(_ client: any TestClientProtocol, _ uri: String, _ object: [String: Any]) async throws -> (HTTPResponse.Status, [String: Any]) {
        try await client.execute(uri: uri, method: .post, body: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: object))) {
            let json = (try? JSONSerialization.jsonObject(with: Data($0.body.readableBytesView)) as? [String: Any]) ?? [:]
            return ($0.status, json)
        }
    }

    /// An account that subscribed and lapsed, so promotional offers apply.
    func lapsedSubscriber(_ client: any TestClientProtocol) async throws -> String {
        let (_, account) = try await post(client, "/device/accounts", [:])
        let id = try #require(account["id"] as? String)
        let (_, purchase) = try await post(client, "/device/purchases", ["account": id, "productId": H.monthly])
        let original = try #require((purchase["transaction"] as? [String: Any])?["originalTransactionId"] as? String)
        _ = try await post(client, "/device/subscriptions/\(original)/auto-renew", ["enabled": false])
        _ = try await post(client, "/control/clock/advance", ["period": "P1M"])
        return id
    }

    // MARK: Tests

    @Test func v1SignatureIsAcceptedOnceAndForgeriesAreRefused() async throws {
        try await withApp { client, key in
            let account = try await lapsedSubscriber(client)
            let signer = PromotionalOfferV1Signer(privateKey: key, keyIdentifier: "OFFERKEY", bundleId: "com.example.storekeeper")
            let signature = try signer.sign(productId: H.monthly, offerId: "winback-50")
            let offer: [String: Any] = [
                "type": "promotional", "id": "winback-50",
                "signature": [
                    "keyIdentifier": signature.keyIdentifier, "nonce": signature.nonce.uuidString.lowercased(),
                    "timestamp": signature.timestamp, "signature": signature.signature,
                ],
            ]
            let (status, body) = try await post(client, "/device/purchases", ["account": account, "productId": H.monthly, "offer": offer])
            #expect(status == .created)
            let transaction = try #require(body["transaction"] as? [String: Any])
            #expect(transaction["offerType"] as? Int == 2)
            #expect(transaction["offerIdentifier"] as? String == "winback-50")
            // The same nonce again: a replay.
            let (replayed, error) = try await post(client, "/device/purchases", ["account": account, "productId": H.monthly, "offer": offer])
            #expect(replayed == .forbidden)
            #expect(error["error"] as? String == "invalid_offer_signature")
            // Signed by another key.
            let forger = PromotionalOfferV1Signer(
                privateKey: P256.Signing.PrivateKey(),
                keyIdentifier: "OFFERKEY",
                bundleId: "com.example.storekeeper"
            )
            let forged = try forger.sign(productId: H.monthly, offerId: "winback-50")
            let (refused, _) = try await post(
                client,
                "/device/purchases",
                [
                    "account": account, "productId": H.monthly,
                    "offer": [
                        "type": "promotional", "id": "winback-50",
                        "signature": [
                            "keyIdentifier": "OFFERKEY", "nonce": forged.nonce.uuidString.lowercased(),
                            "timestamp": forged.timestamp, "signature": forged.signature,
                        ],
                    ],
                ]
            )
            #expect(refused == .forbidden)
            // Unsigned.
            let (unsigned, _) = try await post(
                client,
                "/device/purchases",
                ["account": account, "productId": H.monthly, "offer": ["type": "promotional", "id": "winback-50"]]
            )
            #expect(unsigned == .badRequest)
        }
    }

    @Test func v2JWSAndEligibilityOverride() async throws {
        try await withApp { client, key in
            let account = try await lapsedSubscriber(client)
            let signer = AppStoreRequestSigner(
                privateKey: key,
                keyIdentifier: "OFFERKEY",
                issuerId: Self.issuerId,
                bundleId: "com.example.storekeeper"
            )
            let jws = try signer.promotionalOfferV2(productId: H.monthly, offerIdentifier: "winback-50")
            let (status, _) = try await post(
                client,
                "/device/purchases",
                ["account": account, "productId": H.monthly, "offer": ["type": "promotional", "id": "winback-50", "jws": jws]]
            )
            #expect(status == .created)
            let wrongOffer = try signer.promotionalOfferV2(productId: H.monthly, offerIdentifier: "other")
            let (refused, _) = try await post(
                client,
                "/device/purchases",
                ["account": account, "productId": H.monthly, "offer": ["type": "promotional", "id": "winback-50", "jws": wrongOffer]]
            )
            #expect(refused == .forbidden)

            // A new customer whom the developer declares ineligible gets no free trial.
            let (_, newcomer) = try await post(client, "/device/accounts", [:])
            let newcomerId = try #require(newcomer["id"] as? String)
            let (_, _) = try await post(client, "/device/purchases", ["account": newcomerId, "productId": "com.example.storekeeper.coins.60"])
            let (_, listing) = try await client.execute(uri: "/device/accounts/\(newcomerId)/transactions", method: .get) {
                ($0.status, (try? JSONSerialization.jsonObject(with: Data($0.body.readableBytesView)) as? [String: Any]) ?? [:])
            }
            let anyTransaction = try #require((listing["signedTransactions"] as? [String])?.first)
            let ownedId = try #require(
                try SignedDataVerifier.decodeUnverified(anyTransaction, as: JWSTransactionDecodedPayload.self).payload.transactionId
            )
            let decision = try signer.introductoryOfferEligibility(productId: H.monthly, allowIntroductoryOffer: false, transactionId: ownedId)
            let (bought, body) = try await post(
                client,
                "/device/purchases",
                ["account": newcomerId, "productId": H.monthly, "introductoryOfferEligibility": decision]
            )
            #expect(bought == .created)
            #expect((body["transaction"] as? [String: Any])?["offerType"] == nil)
            #expect((body["transaction"] as? [String: Any])?["price"] as? Int == 9990)
        }
    }
}
