import AppStoreWire
import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// The renewal sweep (seed 000, 续费): subscriptions expiring within a day, past expiry with no news, or in
/// billing retry are checked with Get All Subscription Statuses, and what Apple answers is applied like a
/// notification — a renewal nobody announced is delivered, a refund nobody announced is taken back.
public struct RenewalSweep: PeriodicJob {
    let apps: AppRegistry
    let ledger: Ledger
    let subscriptions: SubscriptionStore
    let lease: JobLease
    let metrics: ServerMetrics
    let logger: Logger

    /// Checks every due subscription once; returns how many were checked.
    @discardableResult
    public func runOnce(now: Date = Date()) async throws -> Int {
        let (acquired, _) = try await lease.acquire("renewal-sweep", for: .seconds(600), now: now)
        guard acquired else { return 0 }
        do {
            let checked = try await sweep(now: now)
            try await lease.release("renewal-sweep", cursor: nil)
            return checked
        } catch {
            try? await lease.release("renewal-sweep", cursor: nil)
            throw error
        }
    }

    private func sweep(now: Date) async throws -> Int {
        var checked = 0
        var failures = 0
        for record in try await subscriptions.dueForCheck(now: now, limit: 500) {
            guard let app = apps.app(bundleId: record.bundleId) else { continue }
            do {
                if let client = app.serverAPI(for: record.environment) {
                    try await check(record, app: app, client: client, now: now)
                } else if let receipt = try await subscriptions.latestReceipt(record.originalTransactionId) {
                    try await checkReceipt(record, receipt: receipt, app: app, now: now)
                } else {
                    continue
                }
                checked += 1
            } catch {
                failures += 1
                logger.warning(
                    "subscription status check failed",
                    metadata: ["storekeeper.original_transaction.id": "\(record.originalTransactionId)", "error": "\(error)"]
                )
            }
        }
        metrics.jobRun("renewal_sweep", items: checked)
        return checked
    }

    /// Asks Apple for one subscription's statuses and applies the answer (also run for one customer from the console).
    func check(_ record: SubscriptionStore.Record, app: AppRegistry.App, client: AppStoreServerAPIClient, now: Date) async throws {
        let started = DispatchTime.now().uptimeNanoseconds
        let response: StatusResponse
        do {
            response = try await client.getAllSubscriptionStatuses(transactionId: record.originalTransactionId)
            metrics.appleCall(endpoint: "subscriptionStatuses", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
        } catch {
            metrics.appleCall(endpoint: "subscriptionStatuses", outcome: "error", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            throw error
        }
        var messages: [StoreMessage] = []
        for group in response.data ?? [] {
            for item in group.lastTransactions ?? [] {
                guard let signed = item.signedTransactionInfo else { continue }
                let transaction = try await app.verifier.verifyTransaction(signed)
                let renewal = try await item.signedRenewalInfo.asyncMap { try await app.verifier.verifyRenewalInfo($0) }
                let signedDate = renewal?.signedDate ?? transaction.signedDate ?? now
                let original = item.originalTransactionId ?? transaction.originalTransactionId ?? ""
                messages.append(
                    StoreMessage.appleStatus(
                        original: original,
                        bundleId: app.configuration.bundleId,
                        environment: StoreEnvironment(storeName: transaction.environment?.rawValue ?? record.environment),
                        signedDate: signedDate,
                        transaction: transaction,
                        signedTransaction: signed,
                        renewal: renewal,
                        status: item.status
                    )
                )
            }
        }
        if let (_, error) = try await ledger.apply(messages, markProcessed: false).first { throw LifecycleFailure(description: error) }
        try await ledger.markChecked(messages.compactMap(\.snapshot?.originalTransactionId) + [record.originalTransactionId])
    }
}

extension RenewalSweep {
    /// For apps with only a shared secret: asks `verifyReceipt` with the subscription's latest stored receipt and
    /// applies the answer (a renewal nobody announced is delivered, a refund taken back), keeping the newer receipt.
    private func checkReceipt(_ record: SubscriptionStore.Record, receipt: String, app: AppRegistry.App, now: Date) async throws {
        let started = DispatchTime.now().uptimeNanoseconds
        let response: VerifyReceiptResponse
        switch await app.receipts.verify(receiptData: receipt) {
        case .valid(let valid):
            metrics.appleCall(endpoint: "verifyReceipt", outcome: "valid", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            response = valid
        case .retryLater(let reason):
            metrics.appleCall(endpoint: "verifyReceipt", outcome: "retry", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            throw LifecycleFailure(description: "verifyReceipt did not decide: \(reason)")
        case .invalid(let status, let reason):
            metrics.appleCall(endpoint: "verifyReceipt", outcome: "invalid", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            throw LifecycleFailure(description: "verifyReceipt status \(status.rawValue): \(reason)")
        }
        let message = StoreMessage.receiptStatus(
            original: record.originalTransactionId,
            response: response,
            bundleId: app.configuration.bundleId,
            now: now
        )
        if let (_, error) = try await ledger.apply([message], markProcessed: false).first { throw LifecycleFailure(description: error) }
        if let latest = response.latestReceipt, latest != receipt, let snapshot = message.snapshot {
            try await ledger.recordReceipt(latest, snapshots: [snapshot])
        }
        try await ledger.markChecked([record.originalTransactionId])
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
