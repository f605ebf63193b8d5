import AppStoreWire
import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore
import StorekeeperStorage

/// The renewal sweep (seed 000, 续费): subscriptions expiring within a day, past expiry with no news, or in
/// billing retry are checked with Get All Subscription Statuses, and what Apple answers is applied like a
/// notification — a renewal nobody announced is delivered, a refund nobody announced is taken back.
public struct RenewalSweep: Service {
    let apps: AppRegistry
    let provider: any DatabaseProvider
    let subscriptions: SubscriptionStore
    let engine: LifecycleEngine
    let lease: JobLease
    let interval: Duration
    let metrics: ServerMetrics
    let ready: ReadinessGate
    let logger: Logger

    init(
        apps: AppRegistry, provider: any DatabaseProvider, subscriptions: SubscriptionStore, engine: LifecycleEngine,
        lease: JobLease, interval: Duration, metrics: ServerMetrics, ready: ReadinessGate, logger: Logger
    ) {
        self.ready = ready
        self.apps = apps
        self.provider = provider
        self.subscriptions = subscriptions
        self.engine = engine
        self.lease = lease
        self.interval = interval
        self.metrics = metrics
        self.logger = logger
    }

    public func run() async throws {
        try await runPeriodically("renewal sweep", every: interval, after: ready, logger: logger) { _ = try await runOnce() }
    }

    /// Checks every due subscription once; returns how many were checked.
    @discardableResult
    public func runOnce(now: Date = Date()) async throws -> Int {
        let (acquired, _) = try await lease.acquire("renewal-sweep", for: .seconds(600), now: now)
        guard acquired else { return 0 }
        defer { Task { try? await lease.release("renewal-sweep", cursor: nil) } }
        var checked = 0
        var failures = 0
        for record in try await subscriptions.dueForCheck(now: now, limit: 500) {
            guard let app = apps.app(bundleId: record.bundleId), let client = app.serverAPI(for: record.environment) else {
                continue
            }
            do {
                try await check(record, app: app, client: client, now: now)
                checked += 1
            } catch {
                failures += 1
                logger.warning(
                    "subscription status check failed",
                    metadata: ["storekeeper.original_transaction.id": "\(record.originalTransactionId)", "error": "\(error)"])
            }
        }
        metrics.jobRun("renewal_sweep", items: checked)
        return checked
    }

    private func check(_ record: SubscriptionStore.Record, app: AppRegistry.App, client: AppStoreServerAPIClient, now: Date) async throws {
        let started = DispatchTime.now().uptimeNanoseconds
        let response: StatusResponse
        do {
            response = try await client.getAllSubscriptionStatuses(transactionId: record.originalTransactionId)
            metrics.appleCall(endpoint: "subscriptionStatuses", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
        } catch {
            metrics.appleCall(endpoint: "subscriptionStatuses", outcome: "error", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            throw error
        }
        var messages: [LifecycleMessage] = []
        for group in response.data ?? [] {
            for item in group.lastTransactions ?? [] {
                guard let signed = item.signedTransactionInfo else { continue }
                let transaction = try await app.verifier.verifyTransaction(signed)
                let renewal = try await item.signedRenewalInfo.asyncMap { try await app.verifier.verifyRenewalInfo($0) }
                let signedDate = renewal?.signedDate ?? transaction.signedDate ?? now
                let original = item.originalTransactionId ?? transaction.originalTransactionId ?? ""
                messages.append(
                    LifecycleMessage.v2(
                        id: "status:\(original):\(Int64(signedDate.timeIntervalSince1970 * 1000))", type: "STATUS", subtype: nil, bundleId: app.configuration.bundleId,
                        environment: transaction.environment?.rawValue ?? record.environment, signedDate: signedDate,
                        transaction: transaction, signedTransaction: signed, renewal: renewal,
                        status: item.status.map { Int($0.rawValue) }, consumptionReason: nil))
            }
        }
        let engine = self.engine
        let ordered = messages.sorted { $0.signedDate < $1.signedDate }
        let failed = try await provider.withTransaction { db in
            try await engine.apply(ordered, now: Date(), on: db).mapValues { "\($0)" }
        }
        if let (_, error) = failed.first { throw LifecycleFailure(description: error) }
        for message in ordered {
            if let original = message.snapshot?.originalTransactionId { try await subscriptions.markChecked(original, now: now) }
        }
        try await subscriptions.markChecked(record.originalTransactionId, now: now)
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
