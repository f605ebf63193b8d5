import Foundation
import SQLKit
import StorageTestSupport
import Testing

@testable import StorekeeperStorage

/// The webhook queue's upkeep: released claims are due again at once, and the statistics refresh tells
/// PostgreSQL's planner how many deliveries are queued (its claim query needs that to keep using the per-user
/// index; on SQLite it is a no-op).
@Suite struct WebhookQueueStoreTests {
    @Test func releasedClaimsAreDueAgainAtOnceAndInOrder() async throws {
        try await StorageHarness.withEachProvider { provider in
            try await Migrator(migrations: StorekeeperSchema.migrations).migrate(provider)
            let now = Date()
            let kind = provider.kind
            @Sendable func claim() async throws -> [WebhookQueueTable.Item] {
                try await provider.withTransaction {
                    try await WebhookQueueTable.claim(endpoint: "backend", limit: 10, lease: .seconds(60), now: now, kind: kind, on: $0)
                }
            }
            try await provider.withTransaction { try await WebhookQueueTable.register(["backend", "other"], now: now, on: $0) }
            let rows = (0..<6).map {
                WebhookQueueTable.Enqueued(endpoint: "backend", key: "user-\($0 % 2)", position: Int64($0 + 1), origin: "outbox")
            }
            // Another endpoint's line for the same user does not hold this one's.
            let other = WebhookQueueTable.Enqueued(endpoint: "other", key: "user-0", position: 1, origin: "outbox")
            _ = try await provider.withTransaction { try await WebhookQueueTable.enqueue([other] + rows, now: now, on: $0) }
            // One head per user is claimed; while claimed, nothing else is due.
            let first = try await claim()
            #expect(first.map(\.eventPosition) == [1, 2])
            #expect(first.allSatisfy { $0.endpoint == "backend" })
            #expect(try await claim().isEmpty)
            // Released (the round could not be sent): the same heads are due again now, not after the lease.
            try await provider.withTransaction { try await WebhookQueueTable.release(first.map(\.id), on: $0) }
            let again = try await claim()
            #expect(again.map(\.id) == first.map(\.id))
            #expect(again.map(\.attempts) == [2, 2], "each claim counts as an attempt")
        }
    }

    @Test func aPauseBeforeTheSenderRegisteredTheEndpointHolds() async throws {
        try await StorageHarness.withEachProvider { provider in
            try await Migrator(migrations: StorekeeperSchema.migrations).migrate(provider)
            let queue = WebhookQueue(provider: provider)
            // An admin pauses right after start, before the sender registered the configured endpoints.
            #expect(try await provider.withTransaction { try await WebhookQueueTable.setPaused("backend", true, now: Date(), on: $0) })
            try await provider.withTransaction { try await WebhookQueueTable.register(["backend"], now: Date(), on: $0) }
            #expect(try await queue.pausedEndpoints() == ["backend"])
            #expect(try await queue.stats("backend").paused)
        }
    }

    @Test func refreshingStatisticsTellsPostgresHowBigTheQueueIs() async throws {
        try await StorageHarness.withEachProvider { provider in
            try await Migrator(migrations: StorekeeperSchema.migrations).migrate(provider)
            let queue = WebhookQueue(provider: provider)
            try await provider.withTransaction { try await WebhookQueueTable.register(["backend"], now: Date(), on: $0) }
            let rows = (0..<3_000).map {
                WebhookQueueTable.Enqueued(endpoint: "backend", key: "user-\($0 % 100)", position: Int64($0 + 1), origin: "outbox")
            }
            let inserted = try await provider.withTransaction { db in
                var total = 0
                for chunk in stride(from: 0, to: rows.count, by: 500) {
                    total += try await WebhookQueueTable.enqueue(Array(rows[chunk..<min(chunk + 500, rows.count)]), now: Date(), on: db)
                }
                return total
            }
            #expect(inserted == 3_000)
            try await queue.refreshStatistics()
            guard provider.kind == .postgres else { return }
            let estimate = try await provider.withSession {
                try await $0.raw("SELECT reltuples::BIGINT AS n FROM pg_class WHERE relname = 'webhook_queue'").first()?.decode(
                    column: "n",
                    as: Int64.self
                )
            }
            #expect(estimate == 3_000)
        }
    }
}
