import Foundation

#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif

#if canImport(UIKit)
import UIKit
#endif

/// Everything StorekeeperKit asks of StoreKit 2, in one place and nothing else: written against StoreKit's API, it
/// compiles against StoreKit on Apple platforms and against `StoreKitStandIn` (the same declarations, backed by the
/// App Store simulator) on Linux, where its code runs in the tests. The only forks are by platform, where Apple's
/// API is (`#if os(...)`), never by which StoreKit it is.
struct StoreKitAdapter: Sendable {
    /// What the purchase sheet ended in.
    enum PurchaseStep: Sendable, Hashable {
        case purchased(transactionId: String, signedTransaction: String)
        case cancelled
        /// Waiting for approval (Ask to Buy) or for the payment method; it arrives later as a transaction update.
        case pending
    }

    /// An offer to buy the product at.
    enum PurchaseOffer: Sendable, Hashable {
        /// A promotional offer with the server's v1 signature fields (StoreKit 2 since iOS 15).
        case promotionalV1(offerId: String, keyIdentifier: String, nonce: UUID, signature: Data, timestamp: Int)
        /// A promotional offer with the server's v2 compact JWS (back-deployed by Apple to iOS 15).
        case promotionalJWS(offerId: String, jws: String)
        /// A win-back offer the App Store lists for this customer (iOS 18); no signature needed.
        case winBack(offerId: String)
    }

    /// A purchase the user started on the App Store: the product and, from iOS 18, the offer they chose there.
    struct Intent: Sendable, Hashable {
        var productId: String
        var offerId: String?
        var offerIsWinBack: Bool
    }

    /// A transaction as the SDK keeps it: its id, what Apple signed, and what it entitles to until when.
    struct SignedTransaction: Sendable, Hashable {
        var transactionId: String
        var productId: String
        var expires: Date?
        var revoked: Bool
        var jws: String
    }

    /// Where a visionOS purchase is confirmed (StoreKit has no `purchase(options:)` there).
    #if os(visionOS)
    var confirmationScene: (@MainActor @Sendable () -> UIScene?)? = nil
    #endif

    /// The products the App Store sells with these ids, as StoreKit has them for this customer.
    func products(_ ids: Set<String>) async throws -> [Product] {
        try await Product.products(for: ids)
    }

    /// On the main actor, as StoreKit's `purchase` is: its result never leaves it, only the step does.
    @MainActor func purchase(_ product: Product, appAccountToken: UUID, offer: PurchaseOffer? = nil) async throws -> PurchaseStep {
        var options: Set<Product.PurchaseOption> = [.appAccountToken(appAccountToken)]
        switch offer {
        case .promotionalV1(let offerId, let keyIdentifier, let nonce, let signature, let timestamp):
            options.insert(
                .promotionalOffer(offerID: offerId, keyID: keyIdentifier, nonce: nonce, signature: signature, timestamp: timestamp)
            )
        case .promotionalJWS(let offerId, let jws):
            options.formUnion(Product.PurchaseOption.promotionalOffer(offerId, compactJWS: jws))
        case .winBack(let offerId):
            guard #available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else { throw OfferUnavailable(offerId: offerId) }
            guard let winBack = product.subscription?.winBackOffers.first(where: { $0.id == offerId }) else {
                throw OfferUnavailable(offerId: offerId)
            }
            options.insert(.winBackOffer(winBack))
        case nil:
            break
        }
        let result: Product.PurchaseResult
        #if os(visionOS)
        guard let scene = confirmationScene?() else { throw NeedsConfirmationScene() }
        result = try await product.purchase(confirmIn: scene, options: options)
        #else
        result = try await product.purchase(options: options)
        #endif
        switch result {
        case .success(let verification):
            // The server verifies the signature against Apple's root; a local verification failure is its to judge.
            return .purchased(transactionId: String(verification.unsafePayloadValue.id), signedTransaction: verification.jwsRepresentation)
        case .userCancelled:
            return .cancelled
        case .pending:
            return .pending
        @unknown default:
            return .pending
        }
    }

    /// The App Store no longer offers this customer the offer (or this OS cannot redeem it).
    struct OfferUnavailable: Error, CustomStringConvertible {
        var offerId: String
        var description: String { "the App Store does not offer \(offerId) to this customer here" }
    }

    /// visionOS confirms a purchase in a scene, and the app gave none.
    struct NeedsConfirmationScene: Error, CustomStringConvertible {
        var description: String { "a visionOS purchase needs the scene to confirm it in (Storekeeper's confirmationScene)" }
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
    /// devices, redeemed offer codes), for as long as the stream is iterated.
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

    /// Purchases the user started on the App Store (promoted in-app purchases, win-back offers).
    func purchaseIntents() -> AsyncStream<Intent> {
        #if os(iOS) || os(macOS) || os(visionOS) || os(Linux)
        // Promoted purchases reach apps from iOS 16.4 and macOS 14.4; watchOS and tvOS have none. Subscribed now,
        // not when the task first runs: an intent right after start() is not missed.
        guard #available(iOS 16.4, macOS 14.4, *) else { return AsyncStream { $0.finish() } }
        let intents = PurchaseIntent.intents
        return AsyncStream { continuation in
            let task = Task {
                for await intent in intents {
                    var offer: Product.SubscriptionOffer?
                    if #available(iOS 18.0, macOS 15.0, visionOS 2.0, *) { offer = intent.offer }
                    continuation.yield(Self.intent(intent.product.id, offer: offer))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        #else
        return AsyncStream { $0.finish() }
        #endif
    }

    static func intent(_ productId: String, offer: Product.SubscriptionOffer?) -> Intent {
        guard let offer, let id = offer.id else { return Intent(productId: productId, offerId: nil, offerIsWinBack: false) }
        var winBack = false
        if #available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) { winBack = offer.type == .winBack }
        return Intent(productId: productId, offerId: id, offerIsWinBack: winBack)
    }

    /// After syncing with the App Store (when `sync`, which may ask the user to sign in): the signed latest
    /// transaction of everything the user owns now.
    func currentEntitlements(sync: Bool) async throws -> [SignedTransaction] {
        if sync { try await AppStore.sync() }
        var found: [SignedTransaction] = []
        for await result in Transaction.currentEntitlements {
            let transaction = result.unsafePayloadValue
            found.append(
                .init(
                    transactionId: String(transaction.id),
                    productId: transaction.productID,
                    expires: transaction.expirationDate,
                    revoked: transaction.revocationDate != nil,
                    jws: result.jwsRepresentation
                )
            )
        }
        return found
    }

    /// Finishes the transaction with this id, if StoreKit still holds it unfinished.
    func finish(transactionId: String) async {
        for await result in Transaction.unfinished where String(result.unsafePayloadValue.id) == transactionId {
            await result.unsafePayloadValue.finish()
        }
    }

    // MARK: The App Store's sheets (iOS and visionOS; on Linux the stand-in's)

    #if os(iOS) || os(visionOS) || os(Linux)
    /// Apple's refund request sheet for the transaction; whether the user sent the request.
    @MainActor func requestRefund(transactionId: UInt64, in scene: UIWindowScene) async throws -> Bool {
        switch try await Transaction.beginRefundRequest(for: transactionId, in: scene) {
        case .success: return true
        case .userCancelled: return false
        @unknown default: return false
        }
    }

    /// Apple's subscription management sheet.
    @MainActor func showManageSubscriptions(in scene: UIWindowScene) async throws {
        try await AppStore.showManageSubscriptions(in: scene)
    }

    /// Apple's offer-code redemption sheet. From iOS 27 it returns the redeemed transaction (`nil` when the user
    /// closed it); before, the transaction arrives through `Transaction.updates` and this returns `nil`.
    @MainActor func redeemOfferCode(from viewController: UIViewController) async throws -> SignedTransaction? {
        if #available(iOS 27.0, visionOS 27.0, *) {
            let result: VerificationResult<Transaction>
            do {
                result = try await AppStore.presentOfferCodeRedeemSheet(from: viewController)
            } catch StoreKitError.userCancelled {
                return nil
            }
            let transaction = result.unsafePayloadValue
            return SignedTransaction(
                transactionId: String(transaction.id),
                productId: transaction.productID,
                expires: transaction.expirationDate,
                revoked: transaction.revocationDate != nil,
                jws: result.jwsRepresentation
            )
        }
        guard let scene = viewController.view.window?.windowScene else { throw NoWindowScene() }
        try await AppStore.presentOfferCodeRedeemSheet(in: scene)
        return nil
    }

    /// The view controller is not in a window scene, so no sheet can be shown over it.
    struct NoWindowScene: Error, CustomStringConvertible {
        var description: String { "the view controller is not in a window scene" }
    }
    #endif
}
