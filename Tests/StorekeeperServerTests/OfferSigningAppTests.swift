import AppStoreWire
import Crypto
import Foundation
import NIOHTTP1
import StorekeeperCore
import StorekeeperServer
import Testing

/// A server for several apps signs an offer with the key of the app it is for (issue 30, item 14).
@Suite("Offer signatures on a server for several apps")
struct OfferSigningAppTests {
    static let otherKey = P256.Signing.PrivateKey()
    static let otherBundle = "com.example.other"

    @Test("the app the request names signs; with several apps and none named, 400 unknown_app")
    func signedByTheNamedApp() async throws {
        let file = try Catalog.load(from: ServerHarness.catalogURL.appendingPathComponent("storekeeper-catalog.json"))
        let campaign = try #require(file.campaigns.first)
        let user = try #require((0..<40).map { "signer-\($0)" }.first { campaign.variant(for: $0).offerId != nil })
        let otherPEM = Self.otherKey.pemRepresentation
        try await ServerHarness.run(
            .sqlite,
            configure: { configuration in
                // Listed first: the app the server used to sign with, whatever the request was for.
                configuration.apps.insert(
                    AppConfiguration(
                        name: "other",
                        bundleId: Self.otherBundle,
                        deployment: .development,
                        apiKeyId: "OTHERKEY01",
                        apiIssuerId: SharedIdentities.issuerId,
                        apiKeyPEM: otherPEM
                    ),
                    at: 0
                )
            }
        ) { server in
            let request: [String: Any] = ["productId": PurchaseFlowTests.monthly, "offerId": "winback-50", "version": "v1"]
            let unnamed = try await server.call(.POST, "/v1/offers/signature", json: request, headers: ServerHarness.userHeaders(user))
            #expect(unnamed.status == 400 && unnamed.code == "unknown_app", "\(unnamed.text)")

            for (bundle, key, keyId) in [
                ("com.example.storekeeper", SharedIdentities.apiKey.publicKey, SharedIdentities.apiKeyId),
                (Self.otherBundle, Self.otherKey.publicKey, "OTHERKEY01"),
            ] {
                var named = request
                named["bundleId"] = bundle
                let answer = try await server.call(.POST, "/v1/offers/signature", json: named, headers: ServerHarness.userHeaders(user))
                #expect(answer.status == 200, "\(answer.text)")
                let signature = PromotionalOfferV1Signature(
                    keyIdentifier: try #require(answer["keyIdentifier"] as? String),
                    nonce: try #require(UUID(uuidString: answer["nonce"] as? String ?? "")),
                    timestamp: Int64(try #require(answer["timestamp"] as? Int)),
                    signature: try #require(answer["signature"] as? String)
                )
                #expect(signature.keyIdentifier == keyId)
                #expect(
                    signature.isValid(
                        publicKey: key,
                        bundleId: bundle,
                        productId: PurchaseFlowTests.monthly,
                        offerId: "winback-50",
                        appAccountToken: ""
                    ),
                    "signed by \(bundle)'s key, for \(bundle)"
                )
            }
            var unknown = request
            unknown["bundleId"] = "com.example.unknown"
            #expect(
                try await server.call(.POST, "/v1/offers/signature", json: unknown, headers: ServerHarness.userHeaders(user)).code == "unknown_app"
            )
        }
    }
}
