import Foundation
import StorekeeperCore
import StorekeeperStorage

/// The webhook sender's and the admins' writes to the webhook queue (``WebhookQueueTable``), through the ledger like
/// every other write. The sender's bookkeeping is quiet: its commits do not wake the sender again.
extension Ledger {
    /// Adds the configured endpoints not yet known, each starting at the outbox's end.
    public func registerWebhookEndpoints(_ names: [String], now: Date) async throws {
        try await write(quiet: true) { uow in try await WebhookQueueTable.register(names, now: now, on: uow.db) }
    }

    /// One round of an endpoint's sender, in one commit: the previous round's outcomes recorded, what `source`
    /// gained queued (at most `queueLimit` read), and up to `claimLimit` due deliveries claimed for `lease` (none
    /// while the endpoint is paused). `queued` counts what was read or queued (0: caught up).
    public func webhookRound(
        _ outcomes: [(id: Int64, outcome: WebhookQueueTable.Outcome)],
        endpoint: String,
        source: WebhookQueueTable.Source,
        queueLimit: Int,
        claimLimit: Int,
        lease: Duration,
        now: Date
    ) async throws -> (queued: Int, claimed: [WebhookQueueTable.Item]) {
        try await write(quiet: true) { uow in
            try await WebhookQueueTable.record(outcomes, now: now, on: uow.db)
            let queued = try await WebhookQueueTable.queue(source, endpoint: endpoint, limit: queueLimit, now: now, kind: uow.kind, on: uow.db)
            guard claimLimit > 0 else { return (queued, []) }
            let claimed = try await WebhookQueueTable.claim(endpoint: endpoint, limit: claimLimit, lease: lease, now: now, kind: uow.kind, on: uow.db)
            return (queued, claimed)
        }
    }

    /// Records the last round's outcomes.
    public func recordWebhookOutcomes(_ outcomes: [(id: Int64, outcome: WebhookQueueTable.Outcome)], now: Date) async throws {
        guard !outcomes.isEmpty else { return }
        try await write(quiet: true) { uow in try await WebhookQueueTable.record(outcomes, now: now, on: uow.db) }
    }

    /// Gives up claims without an outcome, so the deliveries are due again at once.
    public func releaseWebhookClaims(_ ids: [Int64]) async throws {
        guard !ids.isEmpty else { return }
        try await write(quiet: true) { uow in try await WebhookQueueTable.release(ids, on: uow.db) }
    }

    /// Forgets up to `limit` deliveries acknowledged before `before`; how many.
    public func purgeDeliveredWebhooks(before: Date, limit: Int = 10_000) async throws -> Int {
        try await write(quiet: true) { uow in try await WebhookQueueTable.purgeDelivered(before: before, limit: limit, on: uow.db) }
    }

    /// Pauses or resumes an endpoint (registering it, so a pause sent before the sender started holds); whether it
    /// exists.
    public func setWebhookEndpointPaused(_ endpoint: String, _ paused: Bool, now: Date) async throws -> Bool {
        // Not quiet: a resumed endpoint's sender should look at its backlog now.
        try await write { uow in try await WebhookQueueTable.setPaused(endpoint, paused, now: now, on: uow.db) }
    }

    /// Puts the endpoint's dead letters back in line; how many.
    public func retryDeadWebhooks(_ endpoint: String, now: Date) async throws -> Int {
        try await write { uow in try await WebhookQueueTable.retryDead(endpoint, now: now, on: uow.db) }
    }

    /// Queues chosen outbox events to `endpoint` again (at most `limit`); how many.
    public func replayWebhookEvents(_ endpoint: String, _ replay: WebhookQueueTable.Replay, limit: Int, now: Date) async throws -> Int {
        try await write { uow in try await WebhookQueueTable.replay(endpoint, replay, limit: limit, now: now, on: uow.db) }
    }
}
