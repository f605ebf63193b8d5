import AppStoreWire
import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// Names the app install (`appTransactionId`) of delivered transactions that came without it — legacy receipts and
/// transactions signed before Apple added the field — with Get App Transaction Info (App Store Server API 1.17), so
/// support sees which install each purchase came from and the risk signals see one install shared by several app
/// users.
///
/// Apple's answer is a signed app transaction, verified like any other signed data (chain, signature, this app)
/// before it is recorded. One call covers an original transaction and all its renewals (one Apple account's
/// install). Apple's "unknown transaction" answers are recorded and not asked again; an outage is asked again on the
/// next pass.
public struct AppTransactionLookup: PeriodicJob {
    let apps: AppRegistry
    let store: AppTransactionLookups
    let ledger: Ledger
    let metrics: ServerMetrics
    let logger: Logger
    /// How far back deliveries are looked up.
    static let lookback: TimeInterval = 30 * 86_400

    /// The apps whose transactions can be looked up.
    var looking: [AppRegistry.App] { apps.apps.filter { !$0.serverAPI.isEmpty } }

    /// Looks up to 100 original transactions up; returns how many Apple named.
    @discardableResult
    public func runOnce(now _: Date = Date()) async throws -> Int {
        let now = Date()
        let apps = looking
        guard !apps.isEmpty else { return 0 }
        let due = try await store.unnamed(bundleIds: apps.map(\.configuration.bundleId), since: now.addingTimeInterval(-Self.lookback), limit: 100)
        var named = 0
        for item in due {
            guard let app = apps.first(where: { $0.configuration.bundleId == item.bundleId }) else { continue }
            guard let client = app.serverAPI(for: item.environment) else {
                try await ledger.markInstallUnknown(
                    originalTransactionId: item.originalTransactionId,
                    reason: "no App Store Server API for the \(item.environment) environment"
                )
                continue
            }
            do {
                let answer = try await client.getAppTransactionInfo(transactionId: item.originalTransactionId)
                guard let signed = answer.signedAppTransactionInfo else {
                    try await ledger.markInstallUnknown(
                        originalTransactionId: item.originalTransactionId,
                        reason: "Apple's answer carried no signed app transaction"
                    )
                    continue
                }
                let install = try await app.verifier.verifyAppTransaction(signed)
                guard install.bundleId == app.configuration.bundleId, let id = install.appTransactionId, !id.isEmpty, id.utf8.count <= 64 else {
                    try await ledger.markInstallUnknown(
                        originalTransactionId: item.originalTransactionId,
                        reason: "Apple's app transaction is for another app or has no id"
                    )
                    continue
                }
                try await ledger.nameInstall(originalTransactionId: item.originalTransactionId, appTransactionId: id)
                named += 1
            } catch let error as AppStoreServerAPIError where error.httpStatus == 400 || error.httpStatus == 404 {
                try await ledger.markInstallUnknown(originalTransactionId: item.originalTransactionId, reason: error.description)
            } catch let error as SignedDataVerificationError {
                // Never recorded unverified: a forged or broken answer is logged and the purchase left unnamed.
                try await ledger.markInstallUnknown(
                    originalTransactionId: item.originalTransactionId,
                    reason: "Apple's app transaction failed verification: \(error)"
                )
                logger.error(
                    "an app transaction from the App Store Server API failed verification",
                    metadata: ["storekeeper.transaction.original_id": "\(item.originalTransactionId)", "error": "\(error)"]
                )
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                logger.notice(
                    "looking up an app transaction failed; it is asked again on the next pass",
                    metadata: ["storekeeper.transaction.original_id": "\(item.originalTransactionId)", "error": "\(error)"]
                )
                break
            }
        }
        return named
    }
}
