import Foundation
import GooglePlayWire
import StorekeeperCore
import StorekeeperStorage

/// Asks the Play Developer API about a stored real-time developer notification before anything is applied: a
/// notification only names a purchase token, and Google's answer for the token is the truth (Google's own guidance).
/// Google not answering is retried with the inbox's back-off; a token Google does not know is a dead letter at once.
struct PlayConfirmation: Sendable {
    let apps: AppRegistry
    let catalog: CatalogService
    let tokens: PurchaseTokens
    let metrics: ServerMetrics

    /// The message Google's answer supports: for a push (`play`), or for an entry of the voided purchases list that
    /// catch-up stored (`play-voided`), which is read as the voided-purchase notification Google would have pushed.
    func message(for stored: NotificationInbox.Stored) async throws -> StoreMessage {
        let received = stored.received
        let notification: DeveloperNotification
        do {
            if received.format == "play-voided" {
                let item = try PlayJSON.decode(VoidedPurchase.self, from: Array(received.body.utf8))
                notification = DeveloperNotification(
                    packageName: received.bundleId,
                    eventTimeMillis: item.voidedTimeMillis,
                    voidedPurchaseNotification: VoidedPurchaseNotification(
                        purchaseToken: item.purchaseToken,
                        orderId: item.orderId,
                        productType: nil,
                        refundType: item.voidedQuantity == nil ? .fullRefund : .quantityBasedPartialRefund
                    )
                )
            } else {
                notification = try PlayJSON.decode(PubSubPushRequest.self, from: Array(received.body.utf8)).developerNotification()
            }
        } catch {
            throw V1Confirmation.Unconfirmed(description: "not a Play notification: \(error)")
        }
        guard let packageName = notification.packageName, let app = apps.app(packageName: packageName), let play = app.googlePlay else {
            throw V1Confirmation.Unconfirmed(description: "no app sells under package \(notification.packageName ?? "(none)")")
        }
        let resource: PlayPurchaseResource
        var voided: VerifiedTransaction?
        do {
            switch notification.content {
            case .subscription(let note):
                guard let token = note.purchaseToken else { throw V1Confirmation.Unconfirmed(description: "no purchase token") }
                let purchase = try await timed("subscriptionsv2.get") { try await play.api.getSubscription(packageName: packageName, token: token) }
                // Orders that deliver a paid period are priced from Google's order; the rest only change state.
                let ordered: Set<SubscriptionNotificationType> = [.purchased, .renewed, .recovered]
                let price =
                    note.notificationType.map(ordered.contains) == true
                    ? await PlayOrderPricing.total(
                        api: play.api,
                        packageName: packageName,
                        orderId: purchase.lineItems?.first?.latestSuccessfulOrderId ?? purchase.latestOrderId,
                        metrics: metrics
                    ) : nil
                resource = .subscription(
                    purchase,
                    original: try await original(
                        of: token,
                        linked: purchase.linkedPurchaseToken,
                        expired: purchase.outOfAppPurchaseContext?.expiredPurchaseToken
                    ),
                    price: price
                )
            case .oneTimeProduct(let note):
                guard let token = note.purchaseToken, let productId = note.sku else {
                    throw V1Confirmation.Unconfirmed(description: "no purchase token or product")
                }
                guard note.notificationType == .purchased else {
                    resource = .none
                    break
                }
                let purchase = try await timed("products.get") {
                    try await play.api.getProduct(packageName: packageName, productId: productId, token: token)
                }
                resource = .product(
                    purchase,
                    productId: productId,
                    consumable: catalog.catalog.product(productId)?.kind == .consumable,
                    price: await PlayOrderPricing.total(api: play.api, packageName: packageName, orderId: purchase.orderId, metrics: metrics)
                )
            case .voidedPurchase(let note):
                guard let delivered = try await tokens.delivered(transactionId: note.orderId, token: note.purchaseToken) else {
                    resource = .none
                    break
                }
                voided = VerifiedTransaction(
                    transactionId: delivered.transactionId,
                    originalTransactionId: delivered.original,
                    bundleId: delivered.bundleId,
                    productId: delivered.productId,
                    environment: StoreEnvironment(storeName: delivered.environment),
                    purchaseDate: delivered.purchaseDate,
                    quantity: delivered.quantity,
                    source: .storeAPI
                )
                voided?.store = .googlePlay
                voided?.purchaseToken = delivered.purchaseToken
                if note.refundType == .quantityBasedPartialRefund, delivered.productKind != .autoRenewable {
                    let purchase = try await timed("products.get") {
                        try await play.api.getProduct(packageName: packageName, productId: delivered.productId, token: delivered.purchaseToken)
                    }
                    resource = .product(purchase, productId: delivered.productId, consumable: delivered.productKind == .consumable)
                } else {
                    resource = .none
                }
            case .test, .pendingRefundReview, .unknown:
                resource = .none
            }
        } catch let error as PlayDeveloperAPIError where error.isGone || error.status == 400 {
            throw V1Confirmation.Unconfirmed(description: "Google Play does not know the notification's purchase: \(error)")
        } catch let error as PlayDeveloperAPIError {
            throw LifecycleFailure(description: "Google Play did not answer: \(error)")
        }
        return StoreMessage.googlePlay(id: received.id, notification: notification, resource: resource, voided: voided, receivedAt: stored.receivedAt)
    }

    /// The subscription a token belongs to: its own earlier deliveries, or those of the token it replaced.
    /// The subscription a token belongs to: its own, the one of the token it replaced (`linkedPurchaseToken`), or — for
    /// a re-subscription bought outside the app after the last one expired — the expired one's
    /// (`outOfAppPurchaseContext.expiredPurchaseToken`), as the App Store keeps a resubscriber's original transaction.
    func original(of token: String, linked: String?, expired: String? = nil) async throws -> String? {
        if let known = try await tokens.original(ofPurchaseToken: token) { return known }
        for earlier in [linked, expired].compactMap({ $0 }) {
            if let known = try await tokens.original(ofPurchaseToken: earlier) { return known }
        }
        return nil
    }

    private func timed<T>(_ endpoint: String, _ body: () async throws -> T) async throws -> T {
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            let value = try await body()
            metrics.googleCall(endpoint: endpoint, outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            return value
        } catch {
            metrics.googleCall(endpoint: endpoint, outcome: "error", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            throw error
        }
    }
}
