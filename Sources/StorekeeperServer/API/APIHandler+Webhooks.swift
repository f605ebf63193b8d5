import Foundation
import Hummingbird
import Logging
import StorekeeperAPI
import StorekeeperCore
import StorekeeperLedger
import StorekeeperServerAPI
import StorekeeperStorage

/// The admin API over event delivery: the endpoints with their backlog, pause and resume, dead letters back in
/// line, and replays.
extension APIHandler {
    /// The most deliveries one replay may queue.
    static let maximumReplay = 100_000

    /// `GET /v1/admin/webhooks`.
    func adminListWebhooks(_ input: Operations.AdminListWebhooks.Input) async throws -> Operations.AdminListWebhooks.Output {
        var listed: [Components.Schemas.Webhook] = []
        for endpoint in webhookEndpoints { listed.append(try await view(endpoint)) }
        return .ok(.init(body: .json(.init(webhooks: listed))))
    }

    /// `POST /v1/admin/webhooks/{name}/{pause|resume|retry-dead|replay}`.
    func adminControlWebhook(_ input: Operations.AdminControlWebhook.Input) async throws -> Operations.AdminControlWebhook.Output {
        let context = try RequestScope.current()
        let admin = try context.admin()
        guard let endpoint = webhookEndpoints.first(where: { $0.name == input.path.name }) else {
            throw StorekeeperError.notFound("unknown_webhook", "no webhook endpoint named \(input.path.name.prefix(64))")
        }
        let now = Date()
        var queued = 0
        switch input.path.action {
        case .pause:
            _ = try await ledger.setWebhookEndpointPaused(endpoint.name, true, now: now)
        case .resume:
            _ = try await ledger.setWebhookEndpointPaused(endpoint.name, false, now: now)
        case .retryDead:
            queued = try await ledger.retryDeadWebhooks(endpoint.name, now: now)
        case .replay:
            guard endpoint.kind == .events else {
                throw StorekeeperError.invalidInput("invalid_replay", "\(endpoint.name) forwards Apple's notifications; only events are replayed")
            }
            queued = try await ledger.replayWebhookEvents(endpoint.name, try Self.replay(input.body), limit: Self.maximumReplay, now: now)
        }
        context.logger.notice(
            "webhook endpoint changed by an admin",
            metadata: ["admin": "\(admin)", "endpoint": "\(endpoint.name)", "action": "\(input.path.action.rawValue)", "queued": "\(queued)"]
        )
        webhookWake?()
        return .ok(.init(body: .json(.init(webhook: try await view(endpoint), queued: queued))))
    }

    /// What a replay's body names: exactly one of an event, a user, or a time range.
    static func replay(_ body: Operations.AdminControlWebhook.Input.Body?) throws -> WebhookQueueTable.Replay {
        let value: Operations.AdminControlWebhook.Input.Body.JsonPayload? =
            switch body {
            case .json(let json): json
            case nil: nil
            }
        let chosen = [value?.eventId != nil, value?.userId != nil, value?.from != nil || value?.to != nil].filter { $0 }.count
        guard let value, chosen == 1 else {
            throw StorekeeperError.invalidInput("invalid_replay", "a replay names one of eventId, userId, or from and to")
        }
        if let id = value.eventId { return .event(position: id) }
        if let text = value.userId {
            guard let user = UserID.any(try InputText.check(text, field: "userId", maxBytes: UserID.maximumBytes)) else {
                throw StorekeeperError.invalidInput("invalid_user", "userId is not a usable user id")
            }
            return .user(user)
        }
        guard let from = value.from, let to = value.to, from < to, to.timeIntervalSince(from) <= 366 * 86_400 else {
            throw StorekeeperError.invalidInput("invalid_replay", "a replayed range needs from before to, at most 366 days apart")
        }
        return .range(from: from, to: to)
    }

    func view(_ endpoint: WebhookConfiguration) async throws -> Components.Schemas.Webhook {
        let stats = try await webhooks.stats(endpoint.name)
        return .init(
            name: endpoint.name,
            kind: endpoint.kind == .events ? .events : .apple,
            url: endpoint.url.absoluteString,
            eventTypes: endpoint.eventTypes,
            paused: stats.paused,
            pending: stats.pending,
            dead: stats.dead,
            oldestPendingAt: stats.oldestPending,
            eventCursor: stats.eventCursor
        )
    }
}
