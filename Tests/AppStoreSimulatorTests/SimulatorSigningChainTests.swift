import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import Foundation
import Testing
import X509

/// The JWS signing chain the simulator keeps in its state directory looks like Apple's: an OCSP responder on the
/// intermediate and the leaf, names within X.509's bounds, and data signed with it verifies.
@Suite struct SimulatorSigningChainTests {
    typealias H = SimulatorHarness

    @Test func theStoredChainNamesAnOCSPResponderLikeApplesChain() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("signing-chain-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let chain = try SigningIdentityStore.loadOrCreate(directory: directory, ocspURL: "http://127.0.0.1:9999/ocsp")
        let ocsp = AuthorityInformationAccess.AccessDescription(
            method: .ocspServer,
            location: .uniformResourceIdentifier("http://127.0.0.1:9999/ocsp")
        )
        for certificate in [chain.intermediate, chain.leaf] {
            let access = try #require(try certificate.extensions.authorityInformationAccess)
            #expect(Array(access) == [ocsp])
        }
        #expect(try chain.root.extensions.authorityInformationAccess == nil)
        for certificate in [chain.root, chain.intermediate, chain.leaf] {
            #expect(ReceiptSigningIdentityTests.commonNames(certificate).allSatisfy { $0.count <= 64 })
        }
        // Reloaded from disk unchanged.
        let reloaded = try SigningIdentityStore.loadOrCreate(directory: directory)
        #expect(reloaded.leaf == chain.leaf && reloaded.intermediate == chain.intermediate && reloaded.root == chain.root)

        // Everything signed with it verifies through AppStoreWire with the root pinned.
        let catalog = try SimulatorCatalog.load(from: H.catalogURL)
        let store = try SimulatedAppStore(catalog: catalog, signingChain: reloaded, seed: 4)
        let verifier = try SignedDataVerifier(
            configuration: .init(
                bundleId: catalog.bundleId,
                environments: [.sandbox],
                roots: try TrustedRoots.only([chain.root]),
                deployment: .development
            )
        )
        let account = try await store.createAccount()
        let purchase = try await store.purchase(productId: H.monthly, account: account.id)
        #expect(try await verifier.verifyTransaction(purchase.signedTransaction).productId == H.monthly)
        let notification = try #require(await store.sentNotifications().last)
        _ = try await verifier.verifyNotification(notification.signedPayload)
        _ = try await verifier.verifyRenewalInfo(try #require(notification.payload.data?.signedRenewalInfo))
    }

    @Test func theDefaultResponderIsTheSimulatorsDefaultAddress() throws {
        let chain = try SimulatorSigningChain.generate()
        let access = try #require(try chain.leaf.extensions.authorityInformationAccess)
        #expect(Array(access).map(\.location) == [.uniformResourceIdentifier("http://127.0.0.1:8090/ocsp")])
        #expect(Array(access).map(\.method) == [.ocspServer])
    }
}
