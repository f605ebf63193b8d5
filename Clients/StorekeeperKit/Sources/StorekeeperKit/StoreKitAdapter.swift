import Foundation

#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif

/// Everything StorekeeperKit asks of StoreKit 2, in one place and nothing else: written against StoreKit's API, it
/// compiles against StoreKit on Apple platforms and against `StoreKitStandIn` (the same names, backed by the App
/// Store simulator) on Linux, where its code runs in the tests.
struct StoreKitAdapter: Sendable {
    /// What the purchase sheet ended in.
    enum PurchaseStep: Sendable, Hashable {
        case purchased(transactionId: String, signedTransaction: String)
        case cancelled
        /// Waiting for approval (Ask to Buy) or for the payment method; it arrives later as a transaction update.
        case pending
    }

    struct OfferNeedsNewerStoreKit: Error, CustomStringConvertible {
        var description: String { "a v2 offer signature needs iOS 18.4 / macOS 15.4 or later" }
    }

    struct NoSuchProduct: Error, CustomStringConvertible {
        let productId: String
        var description: String { "the App Store has no product \(productId)" }
    }

    /// A promotional offer as the server signed it (`POST /v1/offers/signature`).
    enum SignedOffer: Sendable, Hashable {
        /// The v1 signature fields (StoreKit 2 since iOS 15).
        case v1(offerId: String, keyIdentifier: String, nonce: UUID, signature: Data, timestamp: Int)
        /// A v2 compact JWS (StoreKit from iOS 18.4).
        case v2(offerId: String, jws: String)
    }

    /// Whether this StoreKit takes v2 offer signatures (`promotionalOffer(_:compactJWS:)`).
    var takesOfferJWS: Bool {
        #if canImport(StoreKit)
        if #available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *) { return true }
        return false
        #else
        return true
        #endif
    }

    func purchase(productId: String, appAccountToken: UUID, offer: SignedOffer? = nil) async throws -> PurchaseStep {
        guard let product = try await Product.products(for: [productId]).first else { throw NoSuchProduct(productId: productId) }
        var options: Set<Product.PurchaseOption> = [.appAccountToken(appAccountToken)]
        switch offer {
        case .v1(let offerId, let keyIdentifier, let nonce, let signature, let timestamp):
            options.insert(
                .promotionalOffer(offerID: offerId, keyID: keyIdentifier, nonce: nonce, signature: signature, timestamp: timestamp)
            )
        case .v2(let offerId, let jws):
            #if canImport(StoreKit)
            guard #available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *) else { throw OfferNeedsNewerStoreKit() }
            #endif
            options.insert(.promotionalOffer(offerId, compactJWS: jws))
        case nil:
            break
        }
        switch try await product.purchase(options: options) {
        case .success(let result):
            // The server verifies the signature against Apple's root; a local verification failure is its to judge.
            return .purchased(transactionId: String(result.unsafePayloadValue.id), signedTransaction: result.jwsRepresentation)
        case .userCancelled:
            return .cancelled
        case .pending:
            return .pending
        @unknown default:
            return .pending
        }
    }

    /// The transactions StoreKit holds until the app finishes them (from this launch or earlier ones).
    func unfinished() async -> [(transactionId: String, signedTransaction: String)] {
        var found: [(String, String)] = []
        for await result in Transaction.unfinished {
            found.append((String(result.unsafePayloadValue.id), result.jwsRepresentation))
        }
        return found
    }

    /// Transactions as they arrive from outside the app's own purchases (Ask to Buy approvals, renewals, other
    /// devices), for as long as the stream is iterated.
    func updates() -> AsyncStream<(transactionId: String, signedTransaction: String)> {
        AsyncStream { continuation in
            let task = Task {
                for await result in Transaction.updates {
                    continuation.yield((String(result.unsafePayloadValue.id), result.jwsRepresentation))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Promoted in-app purchases the user started on the App Store, as product ids.
    func purchaseIntents() -> AsyncStream<String> {
        #if !canImport(StoreKit)
        // Subscribed now, not when the task first runs: an intent right after start() is not missed.
        let intents = PurchaseIntent.intents
        #endif
        return AsyncStream { continuation in
            let task = Task {
                #if !canImport(StoreKit)
                for await intent in intents { continuation.yield(intent.product.id) }
                #elseif os(iOS) || os(macOS) || os(visionOS)
                // Promoted purchases reach apps from iOS 16.4 and macOS 14.4; watchOS and tvOS have none.
                if #available(iOS 16.4, macOS 14.4, *) {
                    for await intent in PurchaseIntent.intents { continuation.yield(intent.product.id) }
                }
                #endif
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// After syncing with the App Store: the signed latest transaction of everything the user owns now.
    func currentEntitlements() async throws -> [String] {
        try await AppStore.sync()
        var found: [String] = []
        for await result in Transaction.currentEntitlements { found.append(result.jwsRepresentation) }
        return found
    }

    /// Finishes the transaction with this id, if StoreKit still holds it unfinished.
    func finish(transactionId: String) async {
        for await result in Transaction.unfinished where String(result.unsafePayloadValue.id) == transactionId {
            await result.unsafePayloadValue.finish()
        }
    }
}
