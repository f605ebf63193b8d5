import CoreMetrics
import Foundation
import Metrics
import Prometheus
import StorekeeperCore

/// The server's metrics, kept in its own Prometheus registry (no global metrics system) and served at `/metrics`.
///
/// Recorded through swift-metrics' types on a Prometheus factory. Every family is declared once in ``families``
/// with its type and meaning; the alert rules and the Grafana dashboard under `deploy/` may name only these (a test
/// checks both against a running server's `/metrics`).
public struct ServerMetrics: Sendable {
    /// A metric family the server exports.
    public struct Family: Sendable, Hashable {
        public enum Kind: String, Sendable { case counter, gauge, histogram }
        public let name: String
        public let kind: Kind
        public let help: String
    }

    // MARK: Families

    static let httpRequests = Family(name: "http_server_requests_total", kind: .counter, help: "HTTP requests answered, by route, method and status.")
    static let httpDuration = Family(name: "http_server_request_duration_seconds", kind: .histogram, help: "Time to answer an HTTP request.")
    static let verificationFailures = Family(
        name: "storekeeper_verification_failures_total",
        kind: .counter,
        help: "Signed payloads and receipts that failed verification, by reason."
    )
    static let deliveries = Family(
        name: "storekeeper_deliveries_total",
        kind: .counter,
        help: "Client submissions that delivered (result new) or found the purchase already delivered (repeat)."
    )
    static let refusals = Family(name: "storekeeper_refusals_total", kind: .counter, help: "Requests refused with a client error, by code.")
    static let riskFlags = Family(name: "storekeeper_risk_flags_total", kind: .counter, help: "Risks noticed on delivered purchases, by flag.")
    static let appleRequests = Family(
        name: "storekeeper_apple_requests_total",
        kind: .counter,
        help: "Calls to Apple (verifyReceipt, the App Store Server API) by endpoint and outcome."
    )
    static let appleDuration = Family(name: "storekeeper_apple_request_duration_seconds", kind: .histogram, help: "Apple's answer time, by endpoint.")
    static let notificationsProcessed = Family(
        name: "storekeeper_notifications_processed_total",
        kind: .counter,
        help: "Notifications the processor applied, or failed to apply (retried later)."
    )
    static let ledgerReruns = Family(
        name: "storekeeper_ledger_batch_reruns_total",
        kind: .counter,
        help: "Ledger batches that failed as a whole and ran again step by step, by cause (deadlock, serialization, unique, database, other)."
    )
    static let jobRuns = Family(name: "storekeeper_job_runs_total", kind: .counter, help: "Runs of the periodic jobs.")
    static let jobItems = Family(name: "storekeeper_job_items_total", kind: .counter, help: "Items the periodic jobs handled.")
    static let orders = Family(
        name: "storekeeper_orders_total",
        kind: .counter,
        help: "Orders by event: created, paid (a purchase delivered on it), cancelled, expired (ran out unpaid)."
    )
    static let submissions = Family(
        name: "storekeeper_submissions_total",
        kind: .counter,
        help: "What clients and Apple sent, by path (signed_transaction, receipt, restore, notification_v2, notification_v1, catch_up) and outcome."
    )
    static let purchasesDelivered = Family(
        name: "storekeeper_purchases_delivered_total",
        kind: .counter,
        help: "Transactions delivered for the first time (committed), by product kind, environment and the path that brought them."
    )
    static let deliveryDelay = Family(
        name: "storekeeper_delivery_delay_seconds",
        kind: .histogram,
        help: "Apple's purchase date to delivery, by the path that brought the transaction."
    )
    static let notificationLag = Family(
        name: "storekeeper_notification_lag_seconds",
        kind: .histogram,
        help: "Apple's signedDate to the notification stored, by path."
    )
    static let refunds = Family(
        name: "storekeeper_refunds_total",
        kind: .counter,
        help: "Transactions taken back (refund or Family Sharing revoke), by product, kind and environment."
    )
    static let refundedAmount = Family(
        name: "storekeeper_refunded_amount_total",
        kind: .counter,
        help: "Customer money Apple refunded (prorated where Apple says), in units of the currency."
    )
    static let consumptionAnswers = Family(
        name: "storekeeper_consumption_answers_total",
        kind: .counter,
        help: "Answers to Apple's refund questions, by whether they went out inside Apple's 12 hours."
    )
    static let consumptionDelay = Family(
        name: "storekeeper_consumption_answer_delay_seconds",
        kind: .histogram,
        help: "Apple's refund question to Storekeeper's accepted answer."
    )
    static let notificationBacklog = Family(
        name: "storekeeper_notifications_backlog",
        kind: .gauge,
        help: "Notifications needing attention by status: pending (not yet applied), dead (dead letters), rejected."
    )
    static let pendingRecovery = Family(
        name: "storekeeper_pending_recovery",
        kind: .gauge,
        help: "Verified purchases on the pending-recovery list (unattributed or of an unknown product)."
    )
    static let pendingRecoveryAge = Family(
        name: "storekeeper_pending_recovery_oldest_age_seconds",
        kind: .gauge,
        help: "How long the oldest purchase on the pending-recovery list has waited (0 when the list is empty)."
    )
    static let consumptionOpen = Family(
        name: "storekeeper_consumption_requests_open",
        kind: .gauge,
        help: "Apple's refund questions not yet answered."
    )
    static let consumptionOverdue = Family(
        name: "storekeeper_consumption_requests_overdue",
        kind: .gauge,
        help: "Apple's refund questions not answered and past Apple's 12-hour deadline."
    )
    static let businessRefreshed = Family(
        name: "storekeeper_business_metrics_refreshed_timestamp_seconds",
        kind: .gauge,
        help: "When the business metrics were last read from the database (Unix seconds)."
    )

    static let reconciliationRuns = Family(
        name: "storekeeper_reconciliation_runs_total",
        kind: .counter,
        help: "Days reconciled against Apple's sales reports, by status (reconciled, not_available, failed)."
    )
    static let reconciliationFindings = Family(
        name: "storekeeper_reconciliation_findings",
        kind: .gauge,
        help: "Disagreements with Apple's sales reports over the 35 days up to the latest reconciled, by kind."
    )

    static let customersToReview = Family(
        name: "storekeeper_customers_to_review",
        kind: .gauge,
        help: "Customers whose risk signals pass the risk policy, by signal (\"all\": customers with any), counted every 5 minutes."
    )

    static let webhookDeliveries = Family(
        name: "storekeeper_webhook_deliveries_total",
        kind: .counter,
        help: "POSTs to the app's backend, by endpoint and result (delivered, failed: retried later, dead: given up)."
    )
    static let webhookDuration = Family(
        name: "storekeeper_webhook_request_duration_seconds",
        kind: .histogram,
        help: "How long the app's backend took to answer a POST, by endpoint."
    )
    static let webhookQueued = Family(
        name: "storekeeper_webhook_queue_depth",
        kind: .gauge,
        help: "Deliveries waiting for an endpoint (pending), and those given up (dead), by endpoint."
    )
    static let webhookOldest = Family(
        name: "storekeeper_webhook_oldest_undelivered_seconds",
        kind: .gauge,
        help: "Age of the oldest delivery still waiting for an endpoint (0 when none)."
    )

    static let googleRequests = Family(
        name: "storekeeper_google_requests_total",
        kind: .counter,
        help: "Calls to the Play Developer API by endpoint and outcome."
    )
    static let googleDuration = Family(
        name: "storekeeper_google_request_duration_seconds",
        kind: .histogram,
        help: "The Play Developer API's answer time, by endpoint."
    )
    static let purchasesAcknowledged = Family(
        name: "storekeeper_purchases_acknowledged_total",
        kind: .counter,
        help:
            "Google Play acknowledgements and consumptions of delivered purchases, by result (acknowledged, refused: never asked again, failed: asked again)."
    )
    static let acknowledgementsDue = Family(
        name: "storekeeper_acknowledgements_due",
        kind: .gauge,
        help: "Delivered Google Play purchases not yet acknowledged, by urgency (all; at_risk: Google's deadline is less than the alert margin away)."
    )
    static let transactionsFinished = Family(
        name: "storekeeper_transactions_finished_total",
        kind: .counter,
        help: "Finish Transaction calls for delivered consumables, by result (finished, refused: never asked again, failed: asked again)."
    )

    static let retentionRequests = Family(
        name: "storekeeper_retention_requests_total",
        kind: .counter,
        help:
            "Apple's realtime retention requests, by answer (message, alternateProduct, promotionalOffer, none: no rule, Apple shows the default; refused: failed verification)."
    )
    static let retentionDuration = Family(
        name: "storekeeper_retention_request_duration_seconds",
        kind: .histogram,
        help: "Time to answer a realtime retention request (verification, the customer's history, the rule, the offer's signature)."
    )

    static let accountTokensSet = Family(
        name: "storekeeper_account_tokens_set_total",
        kind: .counter,
        help: "Set App Account Token calls for purchases that came without a token, by result (set, refused: never asked again, failed: asked again)."
    )

    /// The families only a server selling on Google Play exports.
    public static let googlePlayFamilies: [Family] = [googleRequests, googleDuration, purchasesAcknowledged, acknowledgementsDue]

    /// Every family the server exports.
    public static let families: [Family] = [
        httpRequests, httpDuration, verificationFailures, deliveries, refusals, riskFlags, appleRequests, appleDuration,
        notificationsProcessed, jobRuns, jobItems, orders, submissions, purchasesDelivered, deliveryDelay, notificationLag,
        refunds, refundedAmount, consumptionAnswers, consumptionDelay, notificationBacklog, pendingRecovery,
        pendingRecoveryAge, consumptionOpen, consumptionOverdue, businessRefreshed, reconciliationRuns, reconciliationFindings,
        customersToReview, webhookDeliveries, webhookDuration, webhookQueued, webhookOldest, transactionsFinished, accountTokensSet,
        googleRequests, googleDuration, purchasesAcknowledged, acknowledgementsDue,
        retentionRequests, retentionDuration, ledgerReruns,
    ]

    static let requestBuckets: [Duration] = [
        .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .seconds(2.5), .seconds(5), .seconds(10),
    ]
    /// Seconds to hours: a purchase delivered at once, after a retry, or only by the next day's notification.
    static let delayBuckets: [Double] = [0.5, 1, 2, 5, 15, 30, 60, 300, 900, 3_600, 21_600, 86_400, 259_200]
    /// Around Apple's 12-hour deadline.
    static let consumptionBuckets: [Double] = [60, 300, 900, 1_800, 3_600, 7_200, 21_600, 36_000, 43_200, 86_400]

    /// What each job did last in this process, for the console.
    public let runLog = JobRunLog()
    public let registry: PrometheusCollectorRegistry
    let factory: PrometheusMetricsFactory

    public init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = Self.requestBuckets
        factory.valueHistogramBuckets = [
            Self.deliveryDelay.name: Self.delayBuckets, Self.notificationLag.name: Self.delayBuckets,
            Self.consumptionDelay.name: Self.consumptionBuckets,
        ]
        self.factory = factory
        // Series alerts and panels divide by exist from the first scrape, at zero.
        for event in ["created", "paid", "cancelled", "expired"] { counter(Self.orders, [("event", event)]) }
        for inTime in ["true", "false"] { counter(Self.consumptionAnswers, [("in_time", inTime)]) }
        for result in ["applied", "failed"] { counter(Self.notificationsProcessed, [("result", result)]) }
        for result in ["finished", "refused", "failed"] { counter(Self.transactionsFinished, [("result", result)]) }
        for result in ["set", "refused", "failed"] { counter(Self.accountTokensSet, [("result", result)]) }
        for answer in ["message", "alternateProduct", "promotionalOffer", "none", "refused"] { counter(Self.retentionRequests, [("answer", answer)]) }
        _ = duration(Self.retentionDuration, [])
        counter(Self.riskFlags, [("flag", "introductory_offer_repeated")])
        for cause in ["deadlock", "serialization", "unique", "database", "other"] { counter(Self.ledgerReruns, [("cause", cause)]) }
        _ = seconds(Self.consumptionDelay, [])
        for status in ["reconciled", "not_available", "failed"] { counter(Self.reconciliationRuns, [("status", status)]) }
        reconciliationFindings([:])
        backlog(notifications: [:], pendingRecovery: 0, oldestPendingAge: 0, consumptionOpen: 0, consumptionOverdue: 0, at: nil)
        customersToReview(total: 0, bySignal: Dictionary(uniqueKeysWithValues: RiskPolicy.signals.map { ($0, 0) }))
    }

    /// Customers up for review, in all and by signal.
    public func customersToReview(total: Int, bySignal: [String: Int]) {
        gauge(Self.customersToReview, [("signal", "all")]).record(Double(total))
        for (signal, count) in bySignal { gauge(Self.customersToReview, [("signal", signal)]).record(Double(count)) }
    }

    @discardableResult
    func counter(_ family: Family, _ labels: [(String, String)]) -> CoreMetrics.Counter {
        CoreMetrics.Counter(label: family.name, dimensions: labels, factory: factory)
    }

    func gauge(_ family: Family, _ labels: [(String, String)]) -> CoreMetrics.Gauge {
        CoreMetrics.Gauge(label: family.name, dimensions: labels, factory: factory)
    }

    /// A histogram of seconds (its buckets are the factory's for the family).
    func seconds(_ family: Family, _ labels: [(String, String)]) -> CoreMetrics.Recorder {
        CoreMetrics.Recorder(label: family.name, dimensions: labels, aggregate: true, factory: factory)
    }

    func duration(_ family: Family, _ labels: [(String, String)]) -> Metrics.Timer {
        Metrics.Timer(label: family.name, dimensions: labels, factory: factory)
    }

    // MARK: The service

    /// One HTTP request answered.
    public func request(route: String, method: String, status: Int, nanoseconds: UInt64) {
        counter(Self.httpRequests, [("route", route), ("method", method), ("status", String(status))]).increment()
        duration(Self.httpDuration, [("route", route), ("method", method)]).recordNanoseconds(Int64(clamping: nanoseconds))
    }

    /// A signed payload or receipt that failed verification, by reason (`invalid_signature`, `wrong_app`, ...).
    public func verificationFailed(reason: String) {
        counter(Self.verificationFailures, [("reason", reason)]).increment()
    }

    /// A transaction delivered (`result` new) or found already delivered (`repeat`).
    public func delivered(kind: String, environment: String, result: String) {
        counter(Self.deliveries, [("product_kind", kind), ("environment", environment), ("result", result)]).increment()
    }

    /// A ledger batch that failed as a whole and runs again step by step.
    public func ledgerBatchRerun(cause: String) {
        counter(Self.ledgerReruns, [("cause", cause)]).increment()
    }

    /// A request refused with a client error code.
    public func refused(code: String) {
        counter(Self.refusals, [("code", code)]).increment()
    }

    /// Risks noticed on delivered purchases (`introductory_offer_repeated`): delivered, audited and counted here.
    public func riskFlags(_ flags: [String]) {
        for flag in flags { counter(Self.riskFlags, [("flag", flag)]).increment() }
    }

    /// A call to Apple (verifyReceipt, the App Store Server API, App Store Connect), with its outcome.
    public func appleCall(endpoint: String, outcome: String, nanoseconds: UInt64) {
        counter(Self.appleRequests, [("endpoint", endpoint), ("outcome", outcome)]).increment()
        duration(Self.appleDuration, [("endpoint", endpoint)]).recordNanoseconds(Int64(clamping: nanoseconds))
    }

    /// One call to the Play Developer API and what came of it.
    public func googleCall(endpoint: String, outcome: String, nanoseconds: UInt64) {
        counter(Self.googleRequests, [("endpoint", endpoint), ("outcome", outcome)]).increment()
        duration(Self.googleDuration, [("endpoint", endpoint)]).recordNanoseconds(Int64(clamping: nanoseconds))
    }

    /// One acknowledgement (or consumption) of a delivered Play purchase.
    public func purchaseAcknowledged(_ result: String) {
        counter(Self.purchasesAcknowledged, [("result", result)]).increment()
    }

    /// Play purchases still to acknowledge, and how many of them are close to Google's deadline.
    public func acknowledgementsDue(all: Int, atRisk: Int) {
        gauge(Self.acknowledgementsDue, [("urgency", "all")]).record(Double(all))
        gauge(Self.acknowledgementsDue, [("urgency", "at_risk")]).record(Double(atRisk))
    }

    /// One POST to an endpoint of the app's backend and what came of it.
    public func webhook(endpoint: String, result: String, nanoseconds: UInt64) {
        counter(Self.webhookDeliveries, [("endpoint", endpoint), ("result", result)]).increment()
        duration(Self.webhookDuration, [("endpoint", endpoint)]).recordNanoseconds(Int64(clamping: nanoseconds))
    }

    /// An endpoint's series, at zero from the first scrape (alerts divide by them).
    public func webhookEndpoint(_ endpoint: String) {
        for result in ["delivered", "failed", "dead"] { counter(Self.webhookDeliveries, [("endpoint", endpoint), ("result", result)]) }
        _ = duration(Self.webhookDuration, [("endpoint", endpoint)])
        webhookBacklog(endpoint: endpoint, pending: 0, dead: 0, oldestAge: 0)
    }

    /// An endpoint's backlog as read from the database.
    public func webhookBacklog(endpoint: String, pending: Int, dead: Int, oldestAge: Double) {
        gauge(Self.webhookQueued, [("endpoint", endpoint), ("status", "pending")]).record(Double(pending))
        gauge(Self.webhookQueued, [("endpoint", endpoint), ("status", "dead")]).record(Double(dead))
        gauge(Self.webhookOldest, [("endpoint", endpoint)]).record(max(0, oldestAge))
    }

    /// One realtime retention request: how it was answered and how long that took.
    public func retentionAnswered(_ answer: String, nanoseconds: UInt64) {
        counter(Self.retentionRequests, [("answer", answer)]).increment()
        duration(Self.retentionDuration, []).recordNanoseconds(Int64(clamping: nanoseconds))
    }

    /// One Set App Account Token call and what came of it.
    public func accountTokenSet(_ result: String) {
        counter(Self.accountTokensSet, [("result", result)]).increment()
    }

    /// One Finish Transaction call and what came of it.
    public func transactionFinished(_ result: String) {
        counter(Self.transactionsFinished, [("result", result)]).increment()
    }

    /// A batch of notifications applied (or failed, to be retried).
    public func notificationsProcessed(applied: Int, failed: Int) {
        if applied > 0 { counter(Self.notificationsProcessed, [("result", "applied")]).increment(by: Int64(applied)) }
        if failed > 0 { counter(Self.notificationsProcessed, [("result", "failed")]).increment(by: Int64(failed)) }
    }

    /// A periodic job's run (catch-up, sweep, consumption responder) and how many items it handled.
    public func jobRun(_ job: String, items: Int) {
        runLog.record(job, items: items)
        counter(Self.jobRuns, [("job", job)]).increment()
        counter(Self.jobItems, [("job", job)]).increment(by: Int64(max(0, items)))
    }

    // MARK: The business (seed 004)

    /// An order's event: `created`, `paid`, `cancelled`, `expired`.
    public func order(_ event: String, count: Int = 1) {
        guard count > 0 else { return }
        counter(Self.orders, [("event", event)]).increment(by: Int64(count))
    }

    /// One submission by a client or Apple and what came of it.
    public func submission(path: String, outcome: String) {
        counter(Self.submissions, [("path", path), ("outcome", outcome)]).increment()
    }

    /// A notification stored for the first time, `seconds` after Apple signed it.
    public func notificationStored(path: String, lag seconds: Double) {
        self.seconds(Self.notificationLag, [("path", path)]).record(max(0, seconds))
    }

    /// `count` transactions of one kind, environment and path delivered for the first time, and how many seconds
    /// after Apple's purchase date each came (those whose date is known). One metric lookup per group, not per
    /// transaction: the business metrics read thousands of deliveries at a time.
    public func purchasesDelivered(kind: String, environment: String, via: String, count: Int, delays: [Double]) {
        if count > 0 {
            counter(Self.purchasesDelivered, [("product_kind", kind), ("environment", environment), ("via", via)]).increment(by: Int64(count))
        }
        guard !delays.isEmpty else { return }
        let recorder = seconds(Self.deliveryDelay, [("via", via)])
        for delay in delays { recorder.record(max(0, delay)) }
    }

    /// A transaction taken back, with the customer money Apple refunded when the price is known.
    public func refunded(productId: String, kind: String, environment: String, amount: Double?, currency: String?) {
        counter(Self.refunds, [("product_id", productId), ("kind", kind), ("environment", environment)]).increment()
        if let amount, let currency, amount > 0 {
            CoreMetrics.FloatingPointCounter(label: Self.refundedAmount.name, dimensions: [("currency", currency)], factory: factory).increment(
                by: amount
            )
        }
    }

    /// An answer Apple accepted, `delay` seconds after its question.
    public func consumptionAnswered(inTime: Bool, delay: Double) {
        counter(Self.consumptionAnswers, [("in_time", inTime ? "true" : "false")]).increment()
        seconds(Self.consumptionDelay, []).record(max(0, delay))
    }

    /// What waits on someone, as read from the database.
    public func backlog(
        notifications: [String: Int],
        pendingRecovery: Int,
        oldestPendingAge: Double,
        consumptionOpen: Int,
        consumptionOverdue: Int,
        at now: Date?
    ) {
        for status in ["pending", "dead", "rejected"] {
            gauge(Self.notificationBacklog, [("status", status)]).record(Double(notifications[status] ?? 0))
        }
        gauge(Self.pendingRecovery, []).record(Double(pendingRecovery))
        gauge(Self.pendingRecoveryAge, []).record(max(0, oldestPendingAge))
        gauge(Self.consumptionOpen, []).record(Double(consumptionOpen))
        gauge(Self.consumptionOverdue, []).record(Double(consumptionOverdue))
        gauge(Self.businessRefreshed, []).record(now?.timeIntervalSince1970 ?? 0)
    }

    /// A day's reconciliation ended with `status`.
    public func reconciliation(status: String) {
        counter(Self.reconciliationRuns, [("status", status)]).increment()
    }

    /// Findings over the last 35 days, by kind (every kind, zero when none).
    public func reconciliationFindings(_ counts: [String: Int]) {
        for kind in Reconciliation.Kind.allCases {
            gauge(Self.reconciliationFindings, [("kind", kind.rawValue)]).record(Double(counts[kind.rawValue] ?? 0))
        }
    }

    /// The Prometheus text exposition.
    public func exposition() -> String { registry.emitToString() }
}
