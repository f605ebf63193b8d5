import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage
import Synchronization

/// Turns committed facts into the business metrics (seed 004): it follows the outbox — every delivery, refund and
/// consumption answer, whichever path made it, counted once it committed — and reads what waits on someone
/// (dead letters, the recovery list, open refund questions, orders that ran out unpaid).
///
/// It starts at the outbox's end, so its counters, like any Prometheus counter, count from the process's start.
/// Every process that runs it reads the same database: dashboards and alerts take `max` across instances.
public final class BusinessMetrics: Service, Sendable {
    let ledger: Ledger
    let backlog: BacklogStore
    let metrics: ServerMetrics
    let interval: Duration
    let ready: ReadinessGate
    let logger: Logger
    /// One refresh at a time: the periodic one and one an operator runs through the admin API.
    private let lock = AsyncLock()
    private let cursor = Mutex<Cursor?>(nil)
    let risk: RiskStore?
    let riskPolicy: RiskPolicy
    /// When the customers to review were last counted: a heavier read, done at most every ``riskInterval``.
    private let riskCounted = Mutex<Date?>(nil)
    static let riskInterval: TimeInterval = 300

    /// How far the counters have read.
    private struct Cursor {
        var position: Int64
        var expiredThrough: Date
    }

    /// Events read per query.
    static let page = 2_000

    init(
        ledger: Ledger,
        backlog: BacklogStore,
        risk: RiskStore? = nil,
        riskPolicy: RiskPolicy = RiskPolicy(),
        metrics: ServerMetrics,
        interval: Duration,
        ready: ReadinessGate,
        logger: Logger
    ) {
        self.risk = risk
        self.riskPolicy = riskPolicy
        self.ledger = ledger
        self.backlog = backlog
        self.metrics = metrics
        self.interval = interval
        self.ready = ready
        self.logger = logger
    }

    public func run() async throws {
        try await runPeriodically("business metrics", every: interval, after: ready, logger: logger, job: "business_metrics", runLog: metrics.runLog)
        { _ = try await self.refresh() }
    }

    /// Reads the outbox up to its end and the backlog counts; returns how many events it counted.
    @discardableResult
    public func refresh(now: Date = Date()) async throws -> Int {
        try await lock.withLock {
            var current: Cursor
            if let known = cursor.withLock({ $0 }) {
                current = known
            } else {
                current = Cursor(position: try await ledger.lastEventPosition(), expiredThrough: now)
                cursor.withLock { $0 = current }
            }
            var counted = 0
            while true {
                let events = try await ledger.events(after: current.position, limit: Self.page)
                for stored in events { count(stored.event) }
                counted += events.count
                if let last = events.last {
                    current.position = last.position
                    cursor.withLock { $0?.position = last.position }
                }
                if events.count < Self.page { break }
            }
            if now > current.expiredThrough {
                metrics.order("expired", count: try await backlog.ordersExpired(after: current.expiredThrough, through: now))
                cursor.withLock { $0?.expiredThrough = now }
            }
            let snapshot = try await backlog.snapshot(now: now)
            metrics.backlog(
                notifications: snapshot.notifications,
                pendingRecovery: snapshot.pendingRecovery,
                oldestPendingAge: snapshot.oldestPendingRecovery.map { now.timeIntervalSince($0) } ?? 0,
                consumptionOpen: snapshot.consumptionOpen,
                consumptionOverdue: snapshot.consumptionOverdue,
                at: now
            )
            if let risk, riskCounted.withLock({ $0.map { now.timeIntervalSince($0) >= Self.riskInterval || now < $0 } ?? true }) {
                let flagged = try await risk.review(riskPolicy, limit: 10_000)
                var counts = Dictionary(uniqueKeysWithValues: RiskPolicy.signals.map { ($0, 0) })
                for signals in flagged {
                    for flag in signals.flags(riskPolicy) { counts[flag, default: 0] += 1 }
                }
                metrics.customersToReview(total: flagged.count, bySignal: counts)
                riskCounted.withLock { $0 = now }
            }
            metrics.runLog.record("business_metrics", items: counted)
            return counted
        }
    }

    private func count(_ event: LedgerEvent) {
        let details = event.details
        switch event.type {
        case .delivered:
            let delay = details["purchasedAt"].flatMap(Int64.init).map { event.occurredAt.timeIntervalSince(Date(millis: $0)) }
            metrics.purchaseDelivered(
                kind: details["productKind"] ?? "unknown",
                environment: details["environment"] ?? "unknown",
                via: details["via"] ?? "unknown",
                delay: delay
            )
            if details["orderId"] != nil { metrics.order("paid") }
        case .refunded:
            // Milliunits, as Apple signs prices.
            let amount = details["refundedAmount"].flatMap(Int64.init).map { Double($0) / 1000 }
            metrics.refunded(
                productId: details["productId"] ?? "unknown",
                kind: details["kind"] ?? "refund",
                environment: details["environment"] ?? "unknown",
                amount: details["environment"] == "Production" ? amount : nil,
                currency: details["currency"]
            )
        case .consumptionAnswered:
            guard let requested = details["requestedAt"].flatMap(Int64.init).map(Date.init(millis:)) else { return }
            let deadline = details["deadlineAt"].flatMap(Int64.init).map(Date.init(millis:)) ?? requested.addingTimeInterval(12 * 3_600)
            metrics.consumptionAnswered(inTime: event.occurredAt <= deadline, delay: event.occurredAt.timeIntervalSince(requested))
        default:
            break
        }
    }
}
