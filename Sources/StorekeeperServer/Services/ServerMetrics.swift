import CoreMetrics
import Foundation
import Metrics
import Prometheus

/// The server's metrics, kept in its own Prometheus registry (no global metrics system) and served at `/metrics`.
public struct ServerMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    let factory: PrometheusMetricsFactory

    public init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
        ]
        self.factory = factory
    }

    /// One HTTP request answered.
    public func request(route: String, method: String, status: Int, nanoseconds: UInt64) {
        let dimensions = [("route", route), ("method", method), ("status", String(status))]
        Counter(label: "http_server_requests_total", dimensions: dimensions, factory: factory).increment()
        Timer(label: "http_server_request_duration_seconds", dimensions: [("route", route), ("method", method)], factory: factory)
            .recordNanoseconds(Int64(clamping: nanoseconds))
    }

    /// A signed payload or receipt that failed verification, by reason (`invalid_signature`, `wrong_app`, ...).
    public func verificationFailed(reason: String) {
        Counter(label: "storekeeper_verification_failures_total", dimensions: [("reason", reason)], factory: factory).increment()
    }

    /// A transaction delivered (`result` new) or found already delivered (`repeat`).
    public func delivered(kind: String, environment: String, result: String) {
        Counter(
            label: "storekeeper_deliveries_total",
            dimensions: [("product_kind", kind), ("environment", environment), ("result", result)],
            factory: factory
        ).increment()
    }

    /// A request refused with a client error code.
    public func refused(code: String) {
        Counter(label: "storekeeper_refusals_total", dimensions: [("code", code)], factory: factory).increment()
    }

    /// Risks noticed on delivered purchases (`introductory_offer_repeated`): delivered, audited and counted here.
    public func riskFlags(_ flags: [String]) {
        for flag in flags {
            Counter(label: "storekeeper_risk_flags_total", dimensions: [("flag", flag)], factory: factory).increment()
        }
    }

    /// A call to Apple (verifyReceipt, the App Store Server API), with its outcome.
    public func appleCall(endpoint: String, outcome: String, nanoseconds: UInt64) {
        Counter(
            label: "storekeeper_apple_requests_total",
            dimensions: [("endpoint", endpoint), ("outcome", outcome)],
            factory: factory
        ).increment()
        Timer(label: "storekeeper_apple_request_duration_seconds", dimensions: [("endpoint", endpoint)], factory: factory)
            .recordNanoseconds(Int64(clamping: nanoseconds))
    }

    /// A batch of notifications applied (or failed, to be retried).
    public func notificationsProcessed(applied: Int, failed: Int) {
        if applied > 0 {
            Counter(label: "storekeeper_notifications_processed_total", dimensions: [("result", "applied")], factory: factory)
                .increment(by: Int64(applied))
        }
        if failed > 0 {
            Counter(label: "storekeeper_notifications_processed_total", dimensions: [("result", "failed")], factory: factory)
                .increment(by: Int64(failed))
        }
    }

    /// A periodic job's run (catch-up, sweep, consumption responder) and how many items it handled.
    public func jobRun(_ job: String, items: Int) {
        Counter(label: "storekeeper_job_runs_total", dimensions: [("job", job)], factory: factory).increment()
        if items > 0 {
            Counter(label: "storekeeper_job_items_total", dimensions: [("job", job)], factory: factory).increment(by: Int64(items))
        }
    }

    /// The Prometheus text exposition.
    public func exposition() -> String { registry.emitToString() }
}
