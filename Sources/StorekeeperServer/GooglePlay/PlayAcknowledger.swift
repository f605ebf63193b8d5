import Foundation
import GooglePlayWire
import Logging
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// Acknowledges delivered Google Play purchases (consumables are consumed), which Google requires within three
/// days or it refunds and revokes them. Only committed deliveries are read, so an acknowledged purchase is always a
/// credited one; the purchase path acknowledges at once after its commit, and this job retries whatever that missed
/// (an outage, a crash in between), soonest deadline first.
///
/// A purchase still unacknowledged when less than ``alertMargin`` remains before Google's deadline is an alert: an
/// error in the log on every pass and the `storekeeper_acknowledgements_due{urgency="at_risk"}` gauge. Google
/// answering that it will never take one (the purchase was cancelled or voided meanwhile) is recorded and not asked
/// again; one already acknowledged (by the app itself) is recorded as done.
public struct PlayAcknowledger: PeriodicJob {
    let apps: AppRegistry
    let tokens: PurchaseTokens
    let ledger: Ledger
    let metrics: ServerMetrics
    let logger: Logger
    /// Alert when less than this remains (two days: the purchase has waited a day already).
    var alertMargin: TimeInterval = 2 * 86_400

    /// The apps that sell on Google Play.
    var acknowledging: [AppRegistry.App] { apps.apps.filter { $0.googlePlay != nil } }

    /// Acknowledges what is due, up to 500 purchases; returns how many Google confirmed. Deadlines are Google's
    /// (purchase time plus three days) and are measured against `now`.
    @discardableResult
    public func runOnce(now: Date = Date()) async throws -> Int {
        let apps = acknowledging
        guard !apps.isEmpty else { return 0 }
        let due = try await tokens.unacknowledged(bundleIds: apps.compactMap { $0.googlePlay?.configuration.packageName }, limit: 500)
        let atRisk = due.filter { $0.acknowledgement.deadline.timeIntervalSince(now) < alertMargin }
        metrics.acknowledgementsDue(all: due.count, atRisk: atRisk.count)
        if let first = atRisk.first {
            logger.error(
                "Google Play purchases are close to Google's acknowledgement deadline; Google refunds them if it passes",
                metadata: [
                    "count": "\(atRisk.count)", "storekeeper.transaction.id": "\(first.transactionId)",
                    "deadline": "\(first.acknowledgement.deadline)",
                ]
            )
        }
        var confirmed = 0
        for item in due {
            guard let play = apps.first(where: { $0.googlePlay?.configuration.packageName == item.bundleId })?.googlePlay else { continue }
            switch await acknowledge(item, play: play) {
            case .acknowledged: confirmed += 1
            case .refused: continue
            case .failed: return confirmed  // An outage or a quota: the rest waits for the next pass.
            }
        }
        return confirmed
    }

    enum Result { case acknowledged, refused, failed }

    /// Acknowledges (or consumes) one delivered purchase and records Google's answer.
    func acknowledge(_ item: PurchaseTokens.Unacknowledged, play: AppRegistry.PlayApp) async -> Result {
        let package = play.configuration.packageName
        let started = DispatchTime.now().uptimeNanoseconds
        let endpoint =
            item.acknowledgement.action == .consume
            ? "products.consume" : item.productKind == .autoRenewable ? "subscriptions.acknowledge" : "products.acknowledge"
        do {
            switch (item.acknowledgement.action, item.productKind) {
            case (.consume, _):
                try await play.api.consumeProduct(packageName: package, productId: item.productId, token: item.purchaseToken)
            case (.acknowledge, .autoRenewable):
                try await play.api.acknowledgeSubscription(packageName: package, subscriptionId: item.productId, token: item.purchaseToken)
            case (.acknowledge, _):
                try await play.api.acknowledgeProduct(packageName: package, productId: item.productId, token: item.purchaseToken)
            }
            metrics.googleCall(endpoint: endpoint, outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            return await record(item)
        } catch let error as PlayDeveloperAPIError where !error.isRetryable && error.status != 401 && error.status != 403 {
            metrics.googleCall(endpoint: endpoint, outcome: "refused", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            // Google said no: ask where the purchase stands before deciding whether to ask again.
            return await settle(item, play: play, error: error)
        } catch {
            metrics.googleCall(endpoint: endpoint, outcome: "error", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            metrics.purchaseAcknowledged("failed")
            logger.notice(
                "acknowledging a Google Play purchase failed; it is asked again on the next pass",
                metadata: ["storekeeper.transaction.id": "\(item.transactionId)", "error": "\(error)"]
            )
            try? await ledger.markAcknowledgeFailed(item.transactionId, user: item.user, error: "\(error)", final: false)
            return .failed
        }
    }

    private func record(_ item: PurchaseTokens.Unacknowledged) async -> Result {
        do {
            try await ledger.markAcknowledged(item.transactionId, user: item.user, action: item.acknowledgement.action)
            metrics.purchaseAcknowledged("acknowledged")
            return .acknowledged
        } catch {
            // Google has it; recording it again next pass is harmless (acknowledging twice is).
            logger.warning(
                "could not record an acknowledgement",
                metadata: ["storekeeper.transaction.id": "\(item.transactionId)", "error": "\(error)"]
            )
            return .failed
        }
    }

    /// After a refusal: done if the purchase is acknowledged (or consumed) already, final if it is no longer paid for.
    private func settle(_ item: PurchaseTokens.Unacknowledged, play: AppRegistry.PlayApp, error: PlayDeveloperAPIError) async -> Result {
        let package = play.configuration.packageName
        var final = error.isGone
        do {
            if item.productKind == .autoRenewable {
                let purchase = try await play.api.getSubscription(packageName: package, token: item.purchaseToken)
                if purchase.acknowledgementState == .acknowledged { return await record(item) }
                final = final || [.expired, .pendingPurchaseCanceled].contains(purchase.subscriptionState)
            } else {
                let purchase = try await play.api.getProduct(packageName: package, productId: item.productId, token: item.purchaseToken)
                let done =
                    item.acknowledgement.action == .consume ? purchase.consumptionState == .consumed : purchase.acknowledgementState == .acknowledged
                if done { return await record(item) }
                final = final || purchase.purchaseState == .canceled
            }
        } catch let lookup as PlayDeveloperAPIError where lookup.isGone {
            final = true
        } catch {
            // Where it stands is unknown: asked again next pass.
        }
        metrics.purchaseAcknowledged(final ? "refused" : "failed")
        logger.warning(
            final ? "Google Play will never take this acknowledgement" : "Google Play refused an acknowledgement; asked again next pass",
            metadata: ["storekeeper.transaction.id": "\(item.transactionId)", "error": "\(error)"]
        )
        try? await ledger.markAcknowledgeFailed(item.transactionId, user: item.user, error: error.description, final: final)
        return final ? .refused : .failed
    }
}
