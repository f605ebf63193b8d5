import AppStoreWire
import Foundation
import Hummingbird
import Logging
import StorekeeperAPI
import StorekeeperCore
import StorekeeperLedger
import StorekeeperServerAPI
import StorekeeperStorage

/// Operators' view of the lifecycle: Apple's notifications in the inbox and the bodies refused at the door, a
/// subscription's state, dead letters put back in line, Apple's refund questions and their answers, and the periodic
/// jobs run on demand.
extension APIHandler {
    func adminListNotifications(_ input: Operations.AdminListNotifications.Input) async throws -> Operations.AdminListNotifications.Output {
        let limit = try Self.bounded(input.query.limit, name: "limit", in: 1...1000, default: 100)
        let items = try await inbox.list(status: input.query.status?.rawValue, limit: limit)
        return .ok(.init(body: .json(.init(notifications: try items.map(Components.Schemas.NotificationItem.init)))))
    }

    func adminListNotificationRefusals(
        _ input: Operations.AdminListNotificationRefusals.Input
    ) async throws -> Operations.AdminListNotificationRefusals.Output {
        let limit = try Self.bounded(input.query.limit, name: "limit", in: 1...1000, default: 100)
        let items = try await refusals.list(limit: limit)
        return .ok(
            .init(
                body: .json(
                    .init(
                        refusals: try items.map {
                            .init(
                                source: $0.source,
                                reason: $0.reason,
                                format: try documented($0.format),
                                count: $0.count,
                                digest: $0.digest,
                                prefix: $0.prefix,
                                firstSeen: $0.firstSeen,
                                lastSeen: $0.lastSeen
                            )
                        }
                    )
                )
            )
        )
    }

    func adminNotificationSummary(_ input: Operations.AdminNotificationSummary.Input) async throws -> Operations.AdminNotificationSummary.Output {
        .ok(.init(body: .json(.init(counts: .init(additionalProperties: try await inbox.counts())))))
    }

    /// One notification with the body exactly as Apple sent it.
    func adminGetNotification(_ input: Operations.AdminGetNotification.Input) async throws -> Operations.AdminGetNotification.Output {
        let id = try InputText.check(input.path.id, field: "notificationId", maxBytes: 200)
        guard let stored = try await inbox.find(id) else {
            throw StorekeeperError.notFound("unknown_notification", "no notification \(id) in the inbox")
        }
        return .ok(.init(body: .json(.init(value1: try .init(stored), value2: .init(body: stored.received.body)))))
    }

    func adminRetryNotification(_ input: Operations.AdminRetryNotification.Input) async throws -> Operations.AdminRetryNotification.Output {
        let id = try InputText.check(input.path.id, field: "notificationId")
        try await ledger.retryNotification(id)
        jobs.processor?.notificationStored()
        return .ok(.init(body: .json(.init(id: id, status: "pending"))))
    }

    func adminGetSubscription(_ input: Operations.AdminGetSubscription.Input) async throws -> Operations.AdminGetSubscription.Output {
        let original = try InputText.check(input.path.original, field: "originalTransactionId", maxBytes: 64)
        guard let record = try await subscriptions.find(original) else {
            throw StorekeeperError.notFound("unknown_subscription", "no subscription with original transaction \(original)")
        }
        return .ok(.init(body: .json(try .init(record))))
    }

    func adminListConsumptionRequests(
        _ input: Operations.AdminListConsumptionRequests.Input
    ) async throws -> Operations.AdminListConsumptionRequests.Output {
        let status = try InputText.oneOf(input.query.status, name: "status", allowed: ["pending", "answered", "failed", "closed"])
        let items = try await consumption.list(status: status)
        return .ok(
            .init(
                body: .json(
                    .init(
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
            )
        )
    }

    /// `POST /v1/admin/jobs/{job}/run` with an optional `{"now": <epoch ms>}`: tests drive it with a simulator's clock.
    func adminRunJob(_ input: Operations.AdminRunJob.Input) async throws -> Operations.AdminRunJob.Output {
        let job = input.path.job
        let millis = input.body.flatMap { body in
            switch body {
            case .json(let value): value.now
            }
        }
        if let millis, !EpochMillis.range.contains(millis) {
            throw StorekeeperError.invalidInput(
                "invalid_now",
                "now must be epoch milliseconds in \(EpochMillis.range.lowerBound)...\(EpochMillis.range.upperBound)"
            )
        }
        let now = millis.map { Date(timeIntervalSince1970: Double($0) / 1000) } ?? Date()
        let items: Int
        switch job {
        case .processNotifications:
            guard let processor = jobs.processor else { throw unavailable(job.rawValue) }
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
            // Asked for by an operator: shown on the Jobs page even when nothing was due.
            if total == 0 { metrics.runLog.record("process_notifications", items: 0) }
        case .businessMetrics:
            guard let businessMetrics = jobs.businessMetrics else { throw unavailable(job.rawValue) }
            items = try await businessMetrics.refresh(now: now)
        default:
            guard let periodic = jobs.periodic[job.rawValue.replacingOccurrences(of: "-", with: "_")] else {
                throw unavailable(job.rawValue)
            }
            items = try await periodic.runOnce(now: now)
        }
        return .ok(.init(body: .json(.init(job: job.rawValue, items: items))))
    }

    private func unavailable(_ job: String) -> StorekeeperError {
        StorekeeperError(.conflict, code: "job_unavailable", message: "\(job) is not configured on this server (no App Store Server API key?)")
    }
}
