import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// A simulator in Production: what it signs, what its Server API and verifyReceipt answer, and how the two
/// verifyReceipt endpoints route receipts of the other environment (21007 / 21008), as Apple's do.
@Suite struct ProductionEnvironmentTests {
    typealias H = SimulatorHarness
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
    static let coins = "com.example.storekeeper.coins.60"

    struct World {
        let store: SimulatedAppStore
        let catalog: SimulatorCatalog
        let verifier: SignedDataVerifier
        let rootPEM: String
    }

    let apiKey = P256.Signing.PrivateKey()

    func world(_ environment: AppStoreEnvironment) throws -> World {
        let catalog = try SimulatorCatalog.load(from: H.catalogURL)
        let chain = try SimulatorSigningChain.generate(name: "Production Test")
        let store = try SimulatedAppStore(catalog: catalog, signingChain: chain, seed: 21, environment: environment)
        let verifier = try SignedDataVerifier(
            configuration: .init(
                bundleId: catalog.bundleId,
                appAppleId: catalog.appAppleId,
                environments: [environment],
                roots: try TrustedRoots.only([chain.root]),
                deployment: .development
            )
        )
        return World(store: store, catalog: catalog, verifier: verifier, rootPEM: try chain.rootPEM())
    }

    func application(_ world: World) async throws -> some ApplicationProtocol {
        let apple = SimulatorServer.AppleSide(
            apiKeys: ["KEY1": apiKey.publicKey],
            issuerId: Self.issuerId,
            receiptIdentity: try ReceiptFixtures.identity()
        )
        return await SimulatorServer.buildApplication(store: world.store, rootPEM: world.rootPEM, apple: apple, port: 0)
    }

    var authorization: HTTPFields {
        get throws {
            let token = try AppStoreAPITokenGenerator(
                privateKey: apiKey,
                keyId: "KEY1",
                issuerId: Self.issuerId,
                bundleId: "com.example.storekeeper"
            ).makeToken(now: Date())
            return [.authorization: "Bearer \(token)"]
        }
    }

    func object(_ response: TestResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
    }

    // MARK: Tests

    @Test func productionDataIsSignedAsProduction() async throws {
        let w = try world(.production)
        let account = try await w.store.createAccount()
        let subscription = try await w.store.purchase(productId: H.monthly, account: account.id)
        let coins = try await w.store.purchase(productId: Self.coins, account: account.id)
        for signed in [subscription.signedTransaction, coins.signedTransaction] {
            #expect(try await w.verifier.verifyTransaction(signed).environment == .production)
        }
        for notification in await w.store.sentNotifications() {
            let payload = try await w.verifier.verifyNotification(notification.signedPayload)
            #expect(payload.data?.environment == .production)
            // Production notifications name the app; sandbox ones do not.
            #expect(payload.data?.appAppleId == w.catalog.appAppleId)
        }
        let original = try #require(subscription.transaction.originalTransactionId)
        #expect(try await w.verifier.verifyRenewalInfo(try await w.store.signedRenewalInfo(original)).environment == .production)
        let app = try await w.verifier.verifyAppTransaction(try await w.store.signedAppTransaction(anyTransactionId: original))
        #expect(app.receiptType == .production)
        #expect(app.appAppleId == w.catalog.appAppleId)

        // A verifier expecting Sandbox refuses all of it.
        let sandbox = try world(.sandbox)
        let sandboxVerifier = try SignedDataVerifier(
            configuration: .init(
                bundleId: w.catalog.bundleId,
                environments: [.sandbox],
                roots: w.verifier.configuration.roots,
                deployment: .development
            )
        )
        await #expect(throws: (any Error).self) { try await sandboxVerifier.verifyTransaction(coins.signedTransaction) }
        _ = sandbox
    }

    @Test func productionServerAPISaysProduction() async throws {
        let w = try world(.production)
        let account = try await w.store.createAccount()
        let original = try #require(try await w.store.purchase(productId: H.monthly, account: account.id).transaction.originalTransactionId)
        try await application(w).test(.router) { client in
            // Apple serves both environments under /inApps on their own hosts; the simulator serves its one.
            try await client.execute(uri: "/inApps/v2/history/\(original)", method: .get, headers: try authorization) {
                #expect($0.status == .ok)
                let body = try object($0)
                #expect(body["environment"] as? String == "Production")
                #expect(body["appAppleId"] as? Int64 == w.catalog.appAppleId)
            }
            try await client.execute(uri: "/inApps/v1/subscriptions/\(original)", method: .get, headers: try authorization) {
                let body = try object($0)
                #expect(body["environment"] as? String == "Production")
            }
            try await client.execute(uri: "/inApps/v1/transactions/\(original)", method: .get, headers: try authorization) {
                let signed = try #require(try object($0)["signedTransactionInfo"] as? String)
                #expect(try await w.verifier.verifyTransaction(signed).environment == .production)
            }
        }
    }

    @Test(arguments: [AppStoreEnvironment.production, .sandbox])
    func verifyReceiptRoutesReceiptsOfTheOtherEnvironment(environment: AppStoreEnvironment) async throws {
        let w = try world(environment)
        let account = try await w.store.createAccount()
        _ = try await w.store.purchase(productId: Self.coins, account: account.id)
        try await application(w).test(.router) { client in
            let receipt = try await client.execute(uri: "/device/accounts/\(account.id)/receipt", method: .get) {
                try #require(try object($0)["receiptData"] as? String)
            }
            let body = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: ["receipt-data": receipt]))
            let production = try await client.execute(uri: "/verifyReceipt", method: .post, body: body) { try object($0) }
            let sandbox = try await client.execute(uri: "/sandbox/verifyReceipt", method: .post, body: body) { try object($0) }
            switch environment {
            case .production:
                #expect(production["status"] as? Int == 0)
                #expect(production["environment"] as? String == "Production")
                let legacy = try #require(production["receipt"] as? [String: Any])
                // Production receipts carry the app's Apple ID (sandbox ones 0).
                #expect(legacy["app_item_id"] as? Int64 == w.catalog.appAppleId)
                #expect(legacy["receipt_type"] as? String == "Production")
                #expect(sandbox["status"] as? Int == 21008)
            default:
                #expect(production["status"] as? Int == 21007)
                #expect(sandbox["status"] as? Int == 0)
                #expect(sandbox["environment"] as? String == "Sandbox")
                let legacy = try #require(sandbox["receipt"] as? [String: Any])
                #expect(legacy["app_item_id"] as? Int64 == 0)
            }
        }
    }
}
