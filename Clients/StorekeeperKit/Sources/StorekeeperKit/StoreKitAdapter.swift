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

    struct NoSuchProduct: Error, CustomStringConvertible {
        let productId: String
        var description: String { "the App Store has no product \(productId)" }
    }

    func purchase(productId: String, appAccountToken: UUID) async throws -> PurchaseStep {
        guard let product = try await Product.products(for: [productId]).first else { throw NoSuchProduct(productId: productId) }
        switch try await product.purchase(options: [.appAccountToken(appAccountToken)]) {
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

    /// Finishes the transaction with this id, if StoreKit still holds it unfinished.
    func finish(transactionId: String) async {
        for await result in Transaction.unfinished where String(result.unsafePayloadValue.id) == transactionId {
            await result.unsafePayloadValue.finish()
        }
    }
}
