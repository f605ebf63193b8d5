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
    /// The customers to review as last counted, and how far that count read: after the first full review, each
    /// count re-reads only the customers something happened to since, on a reader connection (the full review's
    /// candidate queries scan every transaction: 2.2 s on a million).
    private let reviewed = Mutex<(mark: RiskStore.Watermark, flagged: [String: RiskSignals])?>(nil)

    /// How far the counters have read.
    private struct Cursor {
        var position: Int64
        var expiredThrough: Date
    }

    /// Events read per query. Small: on SQLite each page holds the one connection that purchases and the webhook
    /// sender wait for (2,000 a page put a 130 ms stall into event delivery every refresh under load; 500, 65 ms).
    static let page = 500
    /// The only events the counters read; the others are not fetched at all.
    static let counted: [LedgerEvent.EventType] = [.delivered, .refunded, .consumptionAnswered]

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

    /// How often the outbox is followed between full refreshes. Often, so each read is small: read every 15 s at
    /// 1,000 purchases a second, 15,000 events at once took enough CPU to hold up event delivery by 100 ms.
    static let followInterval: Duration = .seconds(1)
    /// When the last full refresh (backlog counts included) ran.
    private let lastFull = Mutex<ContinuousClock.Instant?>(nil)

    public func run() async throws {
        let follow = min(interval, Self.followInterval)
        try await runPeriodically("business metrics", every: follow, after: ready, logger: logger, job: "business_metrics", runLog: metrics.runLog) {
            let now = ContinuousClock.now
            let full = self.lastFull.withLock { last in
                guard last.map({ now - $0 >= self.interval - .milliseconds(50) }) ?? true else { return false }
                last = now
                return true
            }
            _ = try await self.refresh(full: full)
        }
    }

    /// Reads the outbox up to its end and, when `full`, the backlog counts; returns how many events it counted.
    @discardableResult
    public func refresh(now: Date = Date(), full: Bool = true) async throws -> Int {
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
                let events = try await ledger.events(after: current.position, types: Self.counted, limit: Self.page)
                var deliveries = Deliveries()
                for stored in events { count(stored.event, deliveries: &deliveries) }
                deliveries.report(to: metrics)
                counted += events.count
                if let last = events.last {
                    current.position = last.position
                    cursor.withLock { $0?.position = last.position }
                }
                if events.count < Self.page { break }
            }
            guard full else {
                metrics.runLog.record("business_metrics", items: counted)
                return counted
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
                let flagged = try await reviewIncrementally(risk)
                var counts = Dictionary(uniqueKeysWithValues: RiskPolicy.signals.map { ($0, 0) })
                for signals in flagged.values {
                    for flag in signals.flags(riskPolicy) { counts[flag, default: 0] += 1 }
                }
                metrics.customersToReview(total: flagged.count, bySignal: counts)
                riskCounted.withLock { $0 = now }
            }
            metrics.runLog.record("business_metrics", items: counted)
            return counted
        }
    }

    /// The customers to review: a full review the first time, then the last count updated with the customers
    /// something happened to since its watermark.
    private func reviewIncrementally(_ risk: RiskStore) async throws -> [String: RiskSignals] {
        let mark = try await risk.watermark()
        guard let last = reviewed.withLock({ $0 }) else {
            let flagged = try await risk.review(riskPolicy, limit: 10_000)
            let result = Dictionary(flagged.map { ($0.user, $0) }) { first, _ in first }
            reviewed.withLock { $0 = (mark, result) }
            return result
        }
        var flagged = last.flagged
        for signals in try await risk.signals(of: try await risk.touched(since: last.mark)) {
            flagged[signals.user] = signals.flags(riskPolicy).isEmpty ? nil : signals
        }
        reviewed.withLock { $0 = (mark, flagged) }
        return flagged
    }

    /// A page's deliveries, grouped by their labels, so each group is one metric update.
    private struct Deliveries {
        struct Labels: Hashable {
            var kind: String
            var environment: String
            var via: String
        }
        var groups: [Labels: (count: Int, delays: [Double])] = [:]
        var paidOrders = 0

        func report(to metrics: ServerMetrics) {
            for (labels, group) in groups {
                metrics.purchasesDelivered(
                    kind: labels.kind,
                    environment: labels.environment,
                    via: labels.via,
                    count: group.count,
                    delays: group.delays
                )
            }
            metrics.order("paid", count: paidOrders)
        }
    }

    private func count(_ event: LedgerEvent, deliveries: inout Deliveries) {
        let details = event.details
        switch event.type {
        case .delivered:
            let labels = Deliveries.Labels(
                kind: details["productKind"] ?? "unknown",
                environment: details["environment"] ?? "unknown",
                via: details["via"] ?? "unknown"
            )
            deliveries.groups[labels, default: (0, [])].count += 1
            if let purchased = details["purchasedAt"].flatMap(Int64.init) {
                deliveries.groups[labels, default: (0, [])].delays.append(event.occurredAt.timeIntervalSince(Date(millis: purchased)))
            }
            if details["orderId"] != nil { deliveries.paidOrders += 1 }
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
