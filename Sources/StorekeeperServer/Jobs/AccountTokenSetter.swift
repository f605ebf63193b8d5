import AppStoreWire
import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// Sets each user's app account token at Apple on purchases that reached the user without one (Set App Account
/// Token, App Store Server API 1.16): offer codes, promoted purchases and purchases made outside the app, attributed
/// by restore, recovery or an operator. Afterwards their renewals and notifications carry the token, so the app's own
/// backend, Apple's reports and any later recovery name the user directly.
///
/// Only committed deliveries are read, and Apple's confirmation is recorded (audited on the user) only while the
/// purchase still belongs to the user it was set for; a purchase moved to another user meanwhile (a guest merge, a
/// transfer) is set again with the new user's token. Apple's "unknown transaction" answers are recorded and not asked
/// again; anything else (rate limits, outages) is asked again on the next pass.
public struct AccountTokenSetter: PeriodicJob {
    let apps: AppRegistry
    let ledger: Ledger
    let store: AccountTokenStore
    let metrics: ServerMetrics
    let logger: Logger

    /// The apps whose purchases get tokens.
    var setting: [AppRegistry.App] { apps.apps.filter { $0.configuration.setAppAccountTokens && !$0.serverAPI.isEmpty } }

    /// Sends what is due, up to 200 purchases; returns how many Apple confirmed.
    @discardableResult
    public func runOnce(now _: Date = Date()) async throws -> Int {
        let apps = setting
        guard !apps.isEmpty else { return 0 }
        let due = try await store.due(bundleIds: apps.map(\.configuration.bundleId), limit: 200)
        guard !due.isEmpty else { return 0 }
        var tokens: [UserID: String] = [:]
        for item in due { if let token = item.token { tokens[item.request.user] = token } }
        let missing = Set(due.map(\.request.user)).subtracting(tokens.keys)
        tokens.merge(try await ledger.ensureAccountTokens(missing)) { old, _ in old }
        var confirmed = 0
        for item in due {
            let request = item.request
            guard let token = tokens[request.user], let uuid = UUID(uuidString: token) else { continue }
            guard let client = apps.first(where: { $0.configuration.bundleId == request.bundleId })?.serverAPI(for: request.environment) else {
                // Xcode and local test purchases: no App Store Server API can take them.
                try await ledger.refuseAccountToken(
                    originalTransactionId: request.originalTransactionId,
                    reason: "no App Store Server API for the \(request.environment) environment"
                )
                metrics.accountTokenSet("refused")
                continue
            }
            do {
                try await client.setAppAccountToken(originalTransactionId: request.originalTransactionId, appAccountToken: uuid)
                if try await ledger.confirmAccountToken(originalTransactionId: request.originalTransactionId, user: request.user, token: token) {
                    confirmed += 1
                }
                metrics.accountTokenSet("set")
            } catch let error as AppStoreServerAPIError where error.httpStatus == 400 || error.httpStatus == 404 {
                // Apple will never take it (an unknown or invalid original transaction): say so once and stop asking.
                try await ledger.refuseAccountToken(originalTransactionId: request.originalTransactionId, reason: error.description)
                metrics.accountTokenSet("refused")
                logger.warning(
                    "Apple refused an app account token",
                    metadata: ["storekeeper.transaction.original_id": "\(request.originalTransactionId)", "error": "\(error)"]
                )
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                metrics.accountTokenSet("failed")
                logger.notice(
                    "setting an app account token failed; it is asked again on the next pass",
                    metadata: ["storekeeper.transaction.original_id": "\(request.originalTransactionId)", "error": "\(error)"]
                )
                // An outage or a rate limit: the rest waits for the next pass.
                break
            }
        }
        return confirmed
    }
}
