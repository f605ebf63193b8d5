import Foundation
import Logging
import ServiceLifecycle
import StorekeeperLedger

/// Prunes what only grows — outbox events, applied notifications, audit entries — past the ages
/// `dataRetention.*` sets, in short transactions of `batchSize` rows each so writers never wait long, and never an
/// event or notification a configured webhook endpoint has not received yet.
final class DataRetentionJob: PeriodicJob {
    let ledger: Ledger
    let configuration: DataRetentionConfiguration
    let eventEndpoints: [String]
    let notificationEndpoints: [String]
    let metrics: ServerMetrics
    let logger: Logger

    init(
        ledger: Ledger,
        configuration: DataRetentionConfiguration,
        webhooks: [WebhookConfiguration],
        metrics: ServerMetrics,
        logger: Logger
    ) {
        self.ledger = ledger
        self.configuration = configuration
        self.eventEndpoints = webhooks.filter { $0.kind == .events }.map(\.name)
        self.notificationEndpoints = webhooks.filter { $0.kind == .apple }.map(\.name)
        self.metrics = metrics
        self.logger = logger
    }

    /// Prunes everything due at `now`; returns how many rows went.
    func runOnce(now: Date) async throws -> Int {
        func cutoff(_ age: Duration?) -> Date? { age.map { now.addingTimeInterval(-Double($0.components.seconds)) } }
        var total = Ledger.Pruned()
        while !Task.isCancelled {
            let pruned = try await ledger.prune(
                eventsBefore: cutoff(configuration.events),
                notificationsBefore: cutoff(configuration.notifications),
                auditBefore: cutoff(configuration.audit),
                eventEndpoints: eventEndpoints,
                notificationEndpoints: notificationEndpoints,
                limit: configuration.batchSize
            )
            total.events += pruned.events
            total.notifications += pruned.notifications
            total.audit += pruned.audit
            if pruned.total == 0 { break }
        }
        if total.total > 0 {
            logger.info(
                "old records pruned",
                metadata: ["events": "\(total.events)", "notifications": "\(total.notifications)", "audit": "\(total.audit)"]
            )
        }
        metrics.runLog.record("prune", items: total.total)
        return total.total
    }
}
