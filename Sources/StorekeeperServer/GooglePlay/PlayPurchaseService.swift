import Foundation
import GooglePlayWire
import Logging
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// Delivers a Google Play purchase an Android app submits (`packageName`, `productId`, `purchaseToken`): Google's
/// answer for the token is the only thing trusted, the purchase is delivered once through the same path as the App
/// Store's, and acknowledged (consumables consumed) only after the delivery committed.
struct PlayPurchaseService: Sendable {
    let apps: AppRegistry
    let catalog: CatalogService
    let purchases: PurchaseService
    let tokens: PurchaseTokens
    let acknowledger: PlayAcknowledger
    let metrics: ServerMetrics
    let logger: Logger

    /// Purchase tokens are opaque to Storekeeper; Google's are a few hundred URL-safe characters.
    static let maximumTokenLength = 1_024

    func submit(
        packageName: String,
        productId: String,
        purchaseToken token: String,
        orderId: String?,
        identity: ClientIdentity
    ) async throws
        -> DeliveryResult
    {
        guard let app = apps.app(packageName: packageName), let play = app.googlePlay else {
            throw PurchaseRefusal.wrongApp("no app of this server sells under package \(packageName.prefix(100))")
        }
        guard !token.isEmpty, token.utf8.count <= Self.maximumTokenLength,
            token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") })
        else {
            throw StorekeeperError.rejected(.invalidInput, "invalid_purchase_token", "purchaseToken must be 1–1024 printable ASCII characters")
        }
        let product = catalog.catalog.product(productId)
        var transaction: VerifiedTransaction
        if product?.kind == .autoRenewable {
            let purchase = try await call("subscriptionsv2.get") { try await play.api.getSubscription(packageName: packageName, token: token) }
            guard purchase.lineItems?.contains(where: { $0.productId == productId }) == true else {
                throw PurchaseRefusal.unknownPurchaseToken
            }
            if purchase.subscriptionState == .pending { throw PurchaseRefusal.pending("the subscription's first payment is pending") }
            if purchase.subscriptionState == .pendingPurchaseCanceled { throw PurchaseRefusal.cancelled("the pending subscription was cancelled") }
            var original = try await tokens.original(ofPurchaseToken: token)
            // The token it replaced, or the expired one a re-subscription outside the app names: the same subscription.
            for earlier in [purchase.linkedPurchaseToken, purchase.outOfAppPurchaseContext?.expiredPurchaseToken].compactMap({ $0 })
            where original == nil {
                original = try await tokens.original(ofPurchaseToken: earlier)
            }
            guard
                let mapped = VerifiedTransaction(
                    playSubscription: purchase,
                    packageName: packageName,
                    token: token,
                    original: original,
                    eventTime: Date()
                )
            else { throw PurchaseRefusal.incompleteTransaction("Google's answer lacks the subscription's product, start or expiry") }
            transaction = mapped
            if transaction.commerce.offerDiscountType != "FREE_TRIAL" {
                PlayOrderPricing.apply(
                    await PlayOrderPricing.total(
                        api: play.api,
                        packageName: packageName,
                        orderId: purchase.lineItems?.first?.latestSuccessfulOrderId ?? purchase.latestOrderId,
                        metrics: metrics
                    ),
                    to: &transaction
                )
            }
        } else {
            let purchase = try await call("products.get") {
                try await play.api.getProduct(packageName: packageName, productId: productId, token: token)
            }
            switch purchase.purchaseState {
            case .pending?: throw PurchaseRefusal.pending("Google Play has not been paid yet")
            case .canceled?: throw PurchaseRefusal.cancelled("the purchase was cancelled (or refunded)")
            default: break
            }
            guard
                let mapped = VerifiedTransaction(
                    playProduct: purchase,
                    packageName: packageName,
                    productId: productId,
                    token: token,
                    consumable: product?.kind == .consumable
                )
            else { throw PurchaseRefusal.incompleteTransaction("Google's answer lacks the purchase's state or time") }
            transaction = mapped
            PlayOrderPricing.apply(
                await PlayOrderPricing.total(api: play.api, packageName: packageName, orderId: purchase.orderId, metrics: metrics),
                to: &transaction
            )
        }
        if transaction.isSandbox && !play.configuration.allowTestPurchases { throw PurchaseRefusal.sandboxNotAllowed }
        let result = try await purchases.deliver(transaction, orderId: orderId, identity: identity)
        if case .delivered(let delivery) = result, delivery.newlyDelivered, let acknowledgement = transaction.acknowledgement {
            // After the commit: Google's deadline is days away, and the job retries whatever this misses.
            _ = await acknowledger.acknowledge(
                PurchaseTokens.Unacknowledged(
                    transactionId: transaction.transactionId,
                    bundleId: packageName,
                    productId: transaction.productId,
                    productKind: product?.kind ?? .consumable,
                    purchaseToken: token,
                    acknowledgement: acknowledgement,
                    environment: transaction.environment.rawValue,
                    attempts: 0,
                    user: delivery.user
                ),
                play: play
            )
        }
        return result
    }

    /// One Play Developer API call, its errors as the client's answer: Google not knowing the token is final, Google
    /// not answering is `retry`.
    private func call<T>(_ endpoint: String, _ body: () async throws -> T) async throws -> T {
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            let value = try await body()
            metrics.googleCall(endpoint: endpoint, outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            return value
        } catch let error as PlayDeveloperAPIError where error.isGone || error.status == 400 {
            metrics.googleCall(endpoint: endpoint, outcome: "unknown", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            metrics.verificationFailed(reason: "play_unknown_token")
            throw PurchaseRefusal.unknownPurchaseToken
        } catch let error as PlayDeveloperAPIError {
            metrics.googleCall(endpoint: endpoint, outcome: "error", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            if error.status == 401 || error.status == 403 {
                logger.error("the Play Developer API refused Storekeeper's service account", metadata: ["error": "\(error)"])
            }
            throw PurchaseRefusal.playUndecided("the Play Developer API did not answer: \(error.description.prefix(200))")
        } catch let failure as any StorekeeperFailure {
            throw failure
        } catch {
            metrics.googleCall(endpoint: endpoint, outcome: "error", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            throw PurchaseRefusal.playUndecided("the Play Developer API could not be reached: \(error)")
        }
    }
}
