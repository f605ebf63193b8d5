import Foundation
import Logging
import StorekeeperStorage

/// Stores verified notifications and applies them in the same transaction, for concurrent webhook calls at once.
///
/// One batch is one database transaction: the multi-row inbox insert, then (in a savepoint) the lifecycle engine
/// on the notifications that were new, then marking those applied. If applying fails, the rows still commit as
/// pending and the ``NotificationProcessor`` retries them; if the transaction fails, nothing is stored and every
/// caller answers 5xx so Apple retries. Applying in a later batch than an older message for the same subscription
/// is safe: state merges by `signedDate`, and deliveries and refunds are keyed by transaction id.
final class NotificationApplier: Sendable {
    struct Item: Sendable {
        var received: NotificationInbox.Received
        var message: LifecycleMessage?
    }

    private let combiner: BatchCombiner<Item, Result<Bool, any Error>>

    init(provider: any DatabaseProvider, engine: LifecycleEngine, logger: Logger) {
        combiner = BatchCombiner(maximumBatch: 256, dedicatedDrainer: true) { batch in
            await Self.apply(batch, provider: provider, engine: engine, logger: logger)
        }
    }

    /// Stores (and applies) one notification; returns whether it was new.
    func store(_ item: Item) async throws -> Bool { try await combiner.submit(item).get() }

    private static func apply(
        _ batch: [Item], provider: any DatabaseProvider, engine: LifecycleEngine, logger: Logger
    ) async -> [Result<Bool, any Error>] {
        // The common case runs without savepoints (each costs statements and journal copies on the one writer);
        // if anything in it fails, the whole transaction rolls back and the batch runs again with every step
        // isolated, so one bad message is left pending instead of failing its neighbours' answers.
        do {
            return try await run(batch, isolated: false, provider: provider, engine: engine, logger: logger).map { .success($0) }
        } catch {
            logger.notice("notification batch failed as a whole; storing and applying it step by step", metadata: ["error": "\(error)"])
        }
        do {
            return try await run(batch, isolated: true, provider: provider, engine: engine, logger: logger).map { .success($0) }
        } catch {
            return batch.map { _ in .failure(error) }
        }
    }

    private static func run(
        _ batch: [Item], isolated: Bool, provider: any DatabaseProvider, engine: LifecycleEngine, logger: Logger
    ) async throws -> [Bool] {
        try await provider.withTransaction { db -> [Bool] in
            let now = Date()
            let inserted = try await NotificationInbox.insertRows(batch.map(\.received), now: now, on: db)
            let isNew = NotificationInbox.firstOccurrences(batch.map(\.received.id), inserted: inserted)
            let messages = zip(batch, isNew).compactMap { item, new in new ? item.message : nil }
                .sorted { ($0.signedDate, $0.id) < ($1.signedDate, $1.id) }
            guard isolated else {
                let failed = try await engine.apply(messages, isolated: false, now: now, on: db)
                try await NotificationInbox.markProcessed(messages.map(\.id).filter { failed[$0] == nil }, now: now, on: db)
                return isNew
            }
            do {
                try await withSavepoint("sk_apply", on: db) {
                    let failed = try await engine.apply(messages, now: now, on: db)
                    try await NotificationInbox.markProcessed(messages.map(\.id).filter { failed[$0] == nil }, now: now, on: db)
                }
            } catch {
                // Stored all the same; the processor applies them later.
                logger.warning("notifications stored but not applied yet", metadata: ["error": "\(error)"])
            }
            return isNew
        }
    }
}
