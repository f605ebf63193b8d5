import Foundation
import Hummingbird
import NIOCore
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// Operators' view of the lifecycle: a subscription's state, dead letters put back in line, Apple's refund
/// questions and their answers, and the periodic jobs run on demand.
struct LifecycleController {
    let ledger: Ledger
    let inbox: NotificationInbox
    let subscriptions: SubscriptionStore
    let consumption: ConsumptionRequestStore
    let jobs: LifecycleJobs

    struct Retried: Encodable {
        var id: String
        var status: String
    }
    /// `now` (epoch ms) runs the job as of another moment: tests drive it with a simulator's clock.
    struct JobRun: Decodable { var now: Int64? }
    struct JobResult: Encodable {
        var job: String
        var items: Int
    }
    struct ConsumptionList: Encodable {
        struct Item: Encodable {
            var id: String
            var transactionId: String
            var originalTransactionId: String?
            var userId: String?
            var reason: String?
            var requestedAt: Date
            var deadline: Date
            var status: String
            var attempts: Int
            var answer: String?
            var lastError: String?
            var answeredAt: Date?
        }

        var requests: [Item]
    }
    struct NotificationCounts: Encodable { var counts: [String: Int] }

    func add(to routes: APIRoutes) {
        let admin = routes.admin
        admin.get("subscriptions/:original") { request, context in
            let original = try InputText.check(try context.parameters.require("original"), field: "originalTransactionId", maxBytes: 64)
            guard let record = try await subscriptions.find(original) else {
                throw StorekeeperError.notFound("unknown_subscription", "no subscription with original transaction \(original)")
            }
            return try context.json(API.SubscriptionBody(record))
        }
        admin.get("notifications/summary") { request, context in
            try context.json(NotificationCounts(counts: try await inbox.counts()))
        }
        admin.post("notifications/:id/retry") { request, context in
            let id = try InputText.check(try context.parameters.require("id"), field: "notificationId")
            guard try await ledger.retryNotification(id) else {
                throw StorekeeperError(.conflict, code: "not_retryable", message: "notification \(id) is not pending or dead")
            }
            jobs.processor?.notificationStored()
            return try context.json(Retried(id: id, status: "pending"))
        }
        admin.get("consumption-requests") { request, context in
            let status = try InputText.oneOf(
                request.uri.queryParameters.get("status"),
                name: "status",
                allowed: ["pending", "answered", "failed", "closed"]
            )
            let items = try await consumption.list(status: status)
            return try context.json(
                ConsumptionList(
                    requests: items.map {
                        .init(
                            id: $0.id,
                            transactionId: $0.transactionId,
                            originalTransactionId: $0.originalTransactionId,
                            userId: $0.user?.rawValue,
                            reason: $0.reason,
                            requestedAt: $0.requestedAt,
                            deadline: $0.deadline,
                            status: $0.status,
                            attempts: $0.attempts,
                            answer: $0.answer,
                            lastError: $0.lastError,
                            answeredAt: $0.answeredAt
                        )
                    }
                )
            )
        }
        admin.post("jobs/:job/run") { request, context in
            let job = try context.parameters.require("job")
            let body = try await Self.jobRun(request)
            if let millis = body.now, !EpochMillis.range.contains(millis) {
                throw StorekeeperError.invalidInput(
                    "invalid_now",
                    "now must be epoch milliseconds in \(EpochMillis.range.lowerBound)...\(EpochMillis.range.upperBound)"
                )
            }
            let now = body.now.map { Date(timeIntervalSince1970: Double($0) / 1000) } ?? Date()
            let items: Int
            switch job {
            case "process-notifications":
                guard let processor = jobs.processor else { throw unavailable(job) }
                // Until nothing due is left, including batches another worker of this or another process holds.
                let moment = max(now, Date())
                let deadline = ContinuousClock.now + .seconds(30)
                var total = 0
                while ContinuousClock.now < deadline {
                    let claimed = try await processor.processBatch(now: moment)
                    total += claimed
                    if claimed == 0 {
                        if try await inbox.dueCount(now: moment) == 0 { break }
                        try await Task.sleep(for: .milliseconds(10))
                    }
                }
                items = total
            case "catch-up":
                guard let catchUp = jobs.catchUp else { throw unavailable(job) }
                items = try await catchUp.runOnce(now: now)
            case "renewal-sweep":
                guard let sweep = jobs.sweep else { throw unavailable(job) }
                items = try await sweep.runOnce(now: now)
            case "consumption-responder":
                guard let responder = jobs.responder else { throw unavailable(job) }
                items = try await responder.runOnce(now: now)
            default:
                throw StorekeeperError.notFound(
                    "unknown_job",
                    "jobs are process-notifications, catch-up, renewal-sweep and consumption-responder"
                )
            }
            return try context.json(JobResult(job: job, items: items))
        }
    }

    /// The optional body of a job run: empty, or `{"now": <epoch ms>}`.
    static func jobRun(_ request: Request) async throws -> JobRun {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: 4096)
        } catch {
            throw StorekeeperError(.tooLarge, code: "body_too_large", message: "a job run's body is at most 4096 bytes")
        }
        guard buffer.readableBytes > 0 else { return JobRun(now: nil) }
        do {
            return try JSONDecoder().decode(JobRun.self, from: Data(buffer.readableBytesView))
        } catch {
            throw StorekeeperError.invalidInput("malformed_json", "expected {} or {\"now\": <epoch ms>}")
        }
    }

    func unavailable(_ job: String) -> StorekeeperError {
        StorekeeperError(.conflict, code: "job_unavailable", message: "\(job) is not configured on this server (no App Store Server API key?)")
    }
}

/// The lifecycle's long-running parts, for the admin API to run on demand.
struct LifecycleJobs: Sendable {
    var processor: NotificationProcessor?
    var catchUp: NotificationCatchUp?
    var sweep: RenewalSweep?
    var responder: ConsumptionResponder?
}
