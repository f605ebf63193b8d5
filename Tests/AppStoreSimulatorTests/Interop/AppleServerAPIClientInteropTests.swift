import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Apple's own Python client (app-store-server-library) against the simulator over a real socket: every Server
/// API endpoint, every signed payload verified by Apple's SignedDataVerifier with the simulator's root pinned
/// (`Tests/Interop/apple_server_api_client.py`).
@Suite struct AppleServerAPIClientInteropTests {
    typealias H = SimulatorHarness
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
    static let keyId = "INTEROP001"
    static let coins = "com.example.storekeeper.coins.60"

    @Test(
        .enabled(
            if: ApplePython.shouldRun,
            "Apple's app-store-server-library is not installed (pip install app-store-server-library); CI sets STOREKEEPER_REQUIRE_APPLE_PYTHON=1"
        ),
        .timeLimit(.minutes(5)),
        arguments: [AppStoreEnvironment.sandbox, .production]
    )
    func applesPythonClientDrivesEveryEndpoint(environment: AppStoreEnvironment) async throws {
        try #require(
            ApplePython.available,
            "STOREKEEPER_REQUIRE_APPLE_PYTHON=1 but `python3 -c 'import appstoreserverlibrary'` fails: pip install app-store-server-library"
        )
        let catalog = try SimulatorCatalog.load(from: H.catalogURL)
        // The chain the simulator stores for itself, OCSP responder address included, as Apple's library sees it.
        let chain = try SimulatorSigningChain.generate(name: "Interop")
        let store = try SimulatedAppStore(catalog: catalog, signingChain: chain, seed: 17, environment: environment)
        let apiKey = P256.Signing.PrivateKey()
        // The performance test's time limit is Apple's 700 ms; a loaded test machine must not decide this test.
        await store.setRetentionResponseLimit(milliseconds: 60_000)

        // One customer: a consumable kept, one refunded, a subscription past its trial into a paid month.
        let account = try await store.createAccount()
        let consumable = try #require(try await store.purchase(productId: Self.coins, account: account.id).transaction.transactionId)
        let refunded = try #require(try await store.purchase(productId: Self.coins, account: account.id).transaction.transactionId)
        try await store.requestRefund(transactionId: refunded)
        try await store.decideRefund(transactionId: refunded, approve: true, proratedPercentage: 40_000)
        let subscription = try #require(
            try await store.purchase(productId: H.monthly, account: account.id).transaction.originalTransactionId
        )
        // A second customer pays the yearly membership monthly with a 12-month commitment (API 1.21).
        let committed = try await store.createAccount()
        let commitment = try #require(
            try await store.purchase(productId: H.yearly, account: committed.id, options: PurchaseOptions(billingPlan: .monthly))
                .transaction.originalTransactionId
        )
        try await store.advance(by: 10 * H.day)
        // Apple's newer types, read back through Notification History by Apple's verifier.
        try await store.rescindConsent(account: account.id)
        try await store.externalPurchaseToken(.created, id: (environment == .production ? "" : "SANDBOX_") + "interop-token")
        try await store.sendNotification(.metadataUpdate, transactionId: subscription)
        // Apple's late-2026 purchases: one an organization assigned and took back, a multiseat subscription with a
        // seat refund and a seat Apple unclaimed (fields Apple's library may not know yet: it must still verify them).
        let member = try await store.createAccount()
        let assigned = try #require(try await store.assign(productId: H.monthly, to: member.id).transaction.transactionId)
        try await store.revokeAssignment(transactionId: assigned)
        let team = try #require(
            try await store.purchase(productId: "com.example.storekeeper.teams.monthly", account: member.id, options: PurchaseOptions(quantity: 3))
                .transaction.originalTransactionId
        )
        try await store.refundSeats(originalTransactionId: team, count: 1)
        if environment == .sandbox {
            let claim = try await store.claimSeat(originalTransactionId: team, requestIdentifier: "interop-seat", appTransactionId: nil)
            try await store.appleUnclaimsSeats(originalTransactionId: team, seatClaimIds: [claim])
        }
        let order = try #require(await store.orderId(ofTransaction: consumable))
        // The app has a notification URL (a delivery service would set this), so a test notification is sent.
        await store.setDeliversNotifications(true)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("interop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("SubscriptionKey_\(Self.keyId).p8")
        try (apiKey.pemRepresentation + "\n").write(to: keyFile, atomically: true, encoding: .utf8)

        let apple = SimulatorServer.AppleSide(
            apiKeys: [Self.keyId: apiKey.publicKey],
            issuerId: Self.issuerId,
            receiptIdentity: try ReceiptFixtures.identity()
        )
        let app = await SimulatorServer.buildApplication(store: store, rootPEM: try chain.rootPEM(), apple: apple, port: 0)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let outcome = try await ApplePython.run(
                script: ApplePython.interopDirectory.appendingPathComponent("apple_server_api_client.py"),
                arguments: [
                    "--base-url", "http://127.0.0.1:\(port)", "--key-file", keyFile.path, "--key-id", Self.keyId,
                    "--issuer-id", Self.issuerId, "--bundle-id", catalog.bundleId, "--app-apple-id", String(catalog.appAppleId),
                    "--environment", environment == .production ? "production" : "sandbox",
                    "--consumable", consumable, "--refunded", refunded, "--subscription", subscription, "--order-id", order,
                    "--commitment", commitment, "--late-2026",
                ]
            )
            #expect(outcome.status == 0, "\(outcome.output)")
            #expect(outcome.output.contains("apple_server_api_client: OK"), "\(outcome.output)")
        }
        // What Apple's client sent reached the simulator.
        let answers = await store.receivedConsumptionAnswers()
        #expect(answers.map(\.endpoint) == [.v2, .v1])
        #expect(answers.allSatisfy { $0.transactionId == consumable })
    }
}
