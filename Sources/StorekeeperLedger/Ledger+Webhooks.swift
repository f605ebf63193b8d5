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

    /// Queues the outbox events after `endpoint`'s cursor that `accepts`, and moves the cursor past them; how many
    /// events were read (0: caught up).
    public func queueWebhookEvents(
        endpoint: String,
        limit: Int,
        now: Date,
        accepts: @escaping @Sendable (String, String?) -> Bool
    ) async throws -> Int {
        try await write(quiet: true) { uow in
            try await WebhookQueueTable.queueEvents(endpoint: endpoint, limit: limit, now: now, kind: uow.kind, accepts: accepts, on: uow.db)
        }
    }

    /// Queues Apple's notifications received since `endpoint`'s cursor (less `overlap`) whose bundle id `accepts`;
    /// how many were newly queued.
    public func queueWebhookNotifications(
        endpoint: String,
        overlap: TimeInterval,
        limit: Int,
        now: Date,
        accepts: @escaping @Sendable (String?) -> Bool
    ) async throws -> Int {
        try await write(quiet: true) { uow in
            try await WebhookQueueTable.queueNotifications(
                endpoint: endpoint,
                overlap: overlap,
                limit: limit,
                now: now,
                kind: uow.kind,
                accepts: accepts,
                on: uow.db
            )
        }
    }

    /// Records the previous round's outcomes and claims the next round, in one commit.
    public func settleAndClaimWebhooks(
        _ outcomes: [(id: Int64, outcome: WebhookQueueTable.Outcome)],
        endpoint: String,
        limit: Int,
        lease: Duration,
        now: Date
    ) async throws -> [WebhookQueueTable.Item] {
        try await write(quiet: true) { uow in
            try await WebhookQueueTable.record(outcomes, now: now, on: uow.db)
            return try await WebhookQueueTable.claim(endpoint: endpoint, limit: limit, lease: lease, now: now, kind: uow.kind, on: uow.db)
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
