import AppStoreWire
import Foundation
import Logging
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// Catch-up for one customer, on an operator's word ("I paid and got nothing"): for each Apple account behind the
/// customer's purchases, Get Transaction History lists everything that account bought in the app; what was never
/// delivered is delivered to this customer (as a restore would), what Apple refunded or revoked is taken back, and
/// each of the customer's subscriptions is checked with Get All Subscription Statuses like the renewal sweep does.
///
/// A transaction another user already holds stays theirs (`owned_by_another_user`), so running it twice, or for the
/// wrong customer, moves nothing.
struct CustomerCatchUp: Sendable {
    let apps: AppRegistry
    let purchases: PurchaseService
    let ledger: Ledger
    let subscriptions: SubscriptionStore
    let sweep: RenewalSweep?
    let store: ConsoleStore
    let metrics: ServerMetrics
    let logger: Logger

    /// What one run found.
    struct Summary: Sendable, Hashable {
        /// Transactions Apple listed (each once, across the customer's Apple accounts).
        var listed = 0
        /// Newly delivered to the customer.
        var delivered = 0
        /// Revoked or refunded at Apple, applied (a refund already applied changes nothing).
        var revoked = 0
        /// Held by another user, left with them.
        var ownedByOthers = 0
        /// Parked for recovery (an unknown product, a purchase the catalog cannot deliver).
        var parked = 0
        /// Subscriptions whose status was asked for.
        var subscriptionsChecked = 0
        /// What could not be asked or applied, one line each.
        var problems: [String] = []

        var text: String {
            var parts = [
                "Apple listed \(listed) transaction\(listed == 1 ? "" : "s")", "\(delivered) newly delivered",
                "\(revoked) refunded or revoked", "\(subscriptionsChecked) subscription\(subscriptionsChecked == 1 ? "" : "s") checked",
            ]
            if ownedByOthers > 0 { parts.append("\(ownedByOthers) held by another user") }
            if parked > 0 { parts.append("\(parked) parked for recovery") }
            if !problems.isEmpty { parts.append("problems: " + problems.joined(separator: "; ")) }
            return parts.joined(separator: ", ")
        }
    }

    func run(for user: UserID, now: Date = Date()) async throws -> Summary {
        var summary = Summary()
        var seen = Set<String>()
        var askedAccounts = Set<String>()
        let identity = ClientIdentity(user: user, method: "console catch-up")
        for original in try await store.originals(of: user.rawValue) {
            let key = "\(original.bundleId)|\(original.environment)|\(original.originalTransactionId)"
            // One history answers for every purchase of that Apple account: an original already listed is not asked again.
            guard !askedAccounts.contains(key) else { continue }
            guard let app = apps.app(bundleId: original.bundleId), let client = app.serverAPI(for: original.environment) else {
                summary.problems.append("no Server API key for \(original.bundleId) in \(original.environment)")
                continue
            }
            let pages: [HistoryResponse]
            let started = DispatchTime.now().uptimeNanoseconds
            do {
                pages = try await client.getAllTransactionHistory(transactionId: original.originalTransactionId, maxPages: 100)
                metrics.appleCall(endpoint: "transactionHistory", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            } catch {
                metrics.appleCall(endpoint: "transactionHistory", outcome: "error", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
                summary.problems.append("history of \(original.originalTransactionId): \(error)")
                continue
            }
            for signed in pages.flatMap({ $0.signedTransactions ?? [] }) {
                let transaction: VerifiedTransaction
                do {
                    transaction = try await purchases.verify(signed, source: .restore)
                } catch {
                    summary.problems.append("a listed transaction was refused: \(ConsoleController.message(of: error))")
                    continue
                }
                askedAccounts.insert("\(original.bundleId)|\(original.environment)|\(transaction.originalTransactionId)")
                guard seen.insert(transaction.transactionId).inserted else { continue }
                summary.listed += 1
                if transaction.revocationDate != nil {
                    if try await applyRevocation(transaction, signed: signed, app: app, summary: &summary) { summary.revoked += 1 }
                    continue
                }
                do {
                    switch try await purchases.deliver(transaction, orderId: nil, identity: identity) {
                    case .delivered(let delivery): if delivery.newlyDelivered { summary.delivered += 1 }
                    case .parked: summary.parked += 1
                    case .ownedByAnotherUser: summary.ownedByOthers += 1
                    }
                } catch let failure as any StorekeeperFailure where failure.apiError.code == "owned_by_another_user" {
                    summary.ownedByOthers += 1
                } catch let failure as any StorekeeperFailure where failure.apiError.code == "unknown_product" || failure.apiError.outcome == .retry {
                    summary.parked += 1
                } catch let failure as any StorekeeperFailure {
                    summary.problems.append("\(transaction.transactionId): \(failure.apiError.message)")
                }
            }
        }
        for record in try await subscriptions.subscriptions(of: user) {
            guard let sweep, let app = apps.app(bundleId: record.bundleId), let client = app.serverAPI(for: record.environment) else { continue }
            do {
                try await sweep.check(record, app: app, client: client, now: now)
                summary.subscriptionsChecked += 1
            } catch {
                summary.problems.append("status of \(record.originalTransactionId): \(error)")
            }
        }
        logger.notice("customer catch-up", metadata: ["user": "\(user)", "summary": "\(summary.text)"])
        return summary
    }

    /// Applies a revocation found in the history as the refund (or, for Family Sharing, revocation) notification Apple
    /// would have sent: the same path, so the clawback policy and audit are the same. Returns whether it applied.
    private func applyRevocation(
        _ transaction: VerifiedTransaction,
        signed: String,
        app: AppRegistry.App,
        summary: inout Summary
    ) async throws -> Bool {
        let payload = try await app.verifier.verifyTransaction(signed)
        let message = StoreMessage.appleRevocationFound(transaction, payload: payload, signed: signed)
        if let (_, error) = try await ledger.apply([message], markProcessed: false).first {
            summary.problems.append("refund of \(transaction.transactionId): \(error)")
            return false
        }
        return true
    }
}
