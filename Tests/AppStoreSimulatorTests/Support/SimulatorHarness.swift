import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import Foundation
import Testing

/// A simulated App Store on the sample catalog, with a verifier that pins its root, for tests.
struct SimulatorHarness {
    static let catalogURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Samples/simulator-catalog.json")
    static let monthly = "com.example.storekeeper.membership.monthly"
    static let yearly = "com.example.storekeeper.membership.yearly"
    static let day: TimeInterval = 86_400

    let store: SimulatedAppStore
    let verifier: SignedDataVerifier

    init(seed: UInt64 = 7, start: Date = Date(timeIntervalSince1970: 1_767_225_600)) async throws {
        let catalog = try SimulatorCatalog.load(from: Self.catalogURL)
        let chain = try AppStoreSigningChain.generate(.init(name: "Simulator"))
        store = try SimulatedAppStore(catalog: catalog, signingChain: chain, seed: seed, start: start)
        verifier = try SignedDataVerifier(
            configuration: .init(
                bundleId: catalog.bundleId,
                appAppleId: catalog.appAppleId,
                environments: [.sandbox],
                roots: try TrustedRoots.only([chain.root]),
                deployment: .development
            )
        )
    }

    /// The notifications sent from `index` on, each verified (with the payloads inside) through AppStoreWire's
    /// normal path, as "TYPE/SUBTYPE" strings.
    func verifiedEvents(from index: Int = 0) async throws -> [String] {
        let sent = await store.sentNotifications()
        var events: [String] = []
        for notification in sent[index...] {
            let payload = try await verifier.verifyNotification(notification.signedPayload)
            #expect(payload == notification.payload)
            if let signed = payload.data?.signedTransactionInfo { _ = try await verifier.verifyTransaction(signed) }
            if let signed = payload.data?.signedRenewalInfo { _ = try await verifier.verifyRenewalInfo(signed) }
            events.append([payload.notificationType.rawValue, payload.subtype?.rawValue].compactMap { $0 }.joined(separator: "/"))
        }
        return events
    }

    /// The verified transaction inside a notification.
    func transaction(_ notification: SimulatedNotification) async throws -> JWSTransactionDecodedPayload {
        try await verifier.verifyTransaction(try #require(notification.payload.data?.signedTransactionInfo))
    }

    /// The verified renewal info inside a notification.
    func renewalInfo(_ notification: SimulatedNotification) async throws -> JWSRenewalInfoDecodedPayload {
        try await verifier.verifyRenewalInfo(try #require(notification.payload.data?.signedRenewalInfo))
    }

    func last() async throws -> SimulatedNotification { try #require(await store.sentNotifications().last) }
}
