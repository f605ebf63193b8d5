import AppStoreWire
import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// Tells Apple that delivered consumables are finished (Finish Transaction, App Store Server API 1.20) for the apps
/// that ask for it (`apps.<name>.finishTransactions`), so StoreKit stops handing the device a consumable the server
/// already credited — the device's own `finish()` may never run if the app crashed after submitting.
///
/// Only what committed is finished (the store reads delivered rows), so a finished transaction is always credited.
/// Apple's "unknown transaction" or "not a consumable" answers are recorded and not asked again; anything else
/// (rate limits, outages) is asked again on the next pass. Finishing twice is harmless, so several servers may run it.
public struct TransactionFinisher: PeriodicJob {
    let apps: AppRegistry
    let store: FinishedTransactions
    let ledger: Ledger
    let metrics: ServerMetrics
    let logger: Logger
    /// How far back deliveries are finished: older unfinished ones are the device's business.
    static let lookback: TimeInterval = 3 * 86_400

    /// The apps that finish transactions.
    var finishing: [AppRegistry.App] { apps.apps.filter { $0.configuration.finishTransactions && !$0.serverAPI.isEmpty } }

    /// Finishes what is due, up to 500 transactions; returns how many Apple confirmed. Deliveries are stamped with
    /// the server's clock, so the lookback is too (not a simulated one).
    @discardableResult
    public func runOnce(now _: Date = Date()) async throws -> Int {
        let now = Date()
        let apps = finishing
        guard !apps.isEmpty else { return 0 }
        let due = try await store.unfinished(
            bundleIds: apps.map(\.configuration.bundleId),
            since: now.addingTimeInterval(-Self.lookback),
            limit: 500
        )
        var finished: [String] = []
        for item in due {
            guard let client = apps.first(where: { $0.configuration.bundleId == item.bundleId })?.serverAPI(for: item.environment) else {
                continue
            }
            do {
                try await client.finishTransaction(transactionId: item.transactionId)
                finished.append(item.transactionId)
                metrics.transactionFinished("finished")
            } catch let error as AppStoreServerAPIError where error.httpStatus == 400 || error.httpStatus == 404 {
                // Apple will never finish it (unknown to Apple, or not a consumable): say so once and stop asking.
                try await ledger.markUnfinishable(item.transactionId, reason: error.description)
                metrics.transactionFinished("refused")
                logger.warning(
                    "Apple refused to finish a transaction",
                    metadata: ["storekeeper.transaction.id": "\(item.transactionId)", "error": "\(error)"]
                )
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                metrics.transactionFinished("failed")
                logger.notice(
                    "finishing a transaction failed; it is asked again on the next pass",
                    metadata: ["storekeeper.transaction.id": "\(item.transactionId)", "error": "\(error)"]
                )
                // An outage or a rate limit: the rest waits for the next pass.
                break
            }
        }
        try await ledger.markFinished(finished, at: now)
        return finished.count
    }
}
