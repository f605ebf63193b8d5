import Foundation
import SQLKit
import StorageTestSupport
import Testing

@testable import StorekeeperStorage

/// The webhook queue's statistics refresh: PostgreSQL's planner learns how many deliveries are queued (its claim
/// query needs that to keep using the per-user index); on SQLite it is a no-op.
@Suite struct WebhookQueueStatisticsTests {
    @Test func refreshingStatisticsTellsPostgresHowBigTheQueueIs() async throws {
        try await StorageHarness.withEachProvider { provider in
            try await Migrator(migrations: StorekeeperSchema.migrations).migrate(provider)
            let queue = WebhookQueue(provider: provider)
            try await queue.register(["backend"], now: Date())
            let rows = (0..<3_000).map {
                WebhookQueue.Enqueued(endpoint: "backend", key: "user-\($0 % 100)", position: Int64($0 + 1), origin: "outbox")
            }
            let inserted = try await provider.withTransaction { db in
                var total = 0
                for chunk in stride(from: 0, to: rows.count, by: 500) {
                    total += try await WebhookQueue.enqueue(Array(rows[chunk..<min(chunk + 500, rows.count)]), now: Date(), on: db)
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
