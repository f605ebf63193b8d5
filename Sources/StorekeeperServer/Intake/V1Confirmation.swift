import AppStoreWire
import Foundation
import StorekeeperCore
import StorekeeperStorage

/// Asks Apple about a stored V1 notification before anything is applied: V1 bodies are unsigned (the shared secret
/// proves only that someone knows it), so the body is a hint and `verifyReceipt` of its `latest_receipt` is the truth.
struct V1Confirmation: Sendable {
    let apps: AppRegistry
    let catalog: CatalogService
    let metrics: ServerMetrics

    /// Nothing Apple confirms: the notification becomes a dead letter at once, kept with this reason for operators.
    struct Unconfirmed: Error, CustomStringConvertible {
        let description: String
    }

    /// The message Apple's answer supports. Throws ``Unconfirmed`` when Apple does not vouch for the receipt, and a
    /// retryable error when Apple could not be asked.
    func message(for stored: NotificationInbox.Stored) async throws -> StoreMessage {
        let received = stored.received
        let body = try AppStoreJSON.makeDecoder().decode(ResponseBodyV1.self, from: Data(received.body.utf8))
        guard let bundleId = received.bundleId, let app = apps.app(bundleId: bundleId) else {
            throw Unconfirmed(description: "no app serves bundle id \(received.bundleId ?? "(none)")")
        }
        guard let receipt = body.unifiedReceipt?.latestReceipt, PurchaseService.looksLikeReceipt(receipt) else {
            throw Unconfirmed(description: "the V1 body carries no receipt for verifyReceipt to confirm; nothing applied")
        }
        let started = DispatchTime.now().uptimeNanoseconds
        switch await app.receipts.verify(receiptData: receipt) {
        case .valid(let response):
            metrics.appleCall(endpoint: "verifyReceipt", outcome: "valid", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            let products = catalog.catalog
            return StoreMessage.v1(
                id: received.id,
                body: body,
                confirmed: response,
                bundleId: app.configuration.bundleId,
                receivedAt: stored.receivedAt,
                isAutoRenewable: { products.product($0)?.kind == .autoRenewable }
            )
        case .retryLater(let reason):
            metrics.appleCall(endpoint: "verifyReceipt", outcome: "retry", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            throw LifecycleFailure(description: "verifyReceipt did not decide: \(reason)")
        case .invalid(let status, let reason):
            metrics.appleCall(endpoint: "verifyReceipt", outcome: "invalid", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            throw Unconfirmed(description: "Apple does not confirm the V1 body's receipt (status \(status.rawValue): \(reason)); nothing applied")
        }
    }
}
