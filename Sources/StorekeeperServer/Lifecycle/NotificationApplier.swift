import Foundation
import Logging
import StorekeeperStorage
import Synchronization

/// Stores verified notifications and applies them in the same transaction, for concurrent webhook calls at once.
///
/// One batch is one database transaction. First try: the multi-row inbox insert with the new rows already marked
/// processed, then the lifecycle engine on the notifications that were new, all or nothing. If that fails, the
/// batch runs again isolated: rows inserted pending, the engine in a savepoint with each message in its own, then
/// the applied ones marked; what still fails commits as pending and the ``NotificationProcessor`` retries it. If
/// the transaction itself fails, nothing is stored and every caller answers 5xx so Apple retries. Applying in a later batch than an older message for the same subscription
/// is safe: state merges by `signedDate`, and deliveries and refunds are keyed by transaction id.
final class NotificationApplier: Sendable {
    struct Item: Sendable {
        var received: NotificationInbox.Received
        var message: LifecycleMessage?
    }

    private let combiner: BatchCombiner<Item, Result<Bool, any Error>>

    init(provider: any DatabaseProvider, engine: LifecycleEngine, logger: Logger) {
        // Header digests this process has seen committed: the same few certificate chains sign everything, so
        // after the first batch no batch writes them again.
        let storedHeaders = Mutex(Set<String>())
        combiner = BatchCombiner(maximumBatch: 256, dedicatedDrainer: true) { batch in
            let known = storedHeaders.withLock { $0 }
            let results = await Self.apply(batch, storedHeaders: known, provider: provider, engine: engine, logger: logger)
            if results.contains(where: { if case .success = $0 { true } else { false } }) {
                let digests = batch.compactMap { $0.received.compactBody?.headers.keys }.joined()
                storedHeaders.withLock { $0.formUnion(digests) }
            }
            return results
        }
    }

    /// Stores (and applies) one notification; returns whether it was new.
    func store(_ item: Item) async throws -> Bool { try await combiner.submit(item).get() }

    private static func apply(
        _ batch: [Item], storedHeaders: Set<String>, provider: any DatabaseProvider, engine: LifecycleEngine, logger: Logger
    ) async -> [Result<Bool, any Error>] {
        // The common case runs without savepoints (each costs statements and journal copies on the one writer);
        // if anything in it fails, the whole transaction rolls back and the batch runs again with every step
        // isolated, so one bad message is left pending instead of failing its neighbours' answers.
        do {
            return try await run(batch, isolated: false, storedHeaders: storedHeaders, provider: provider, engine: engine, logger: logger).map { .success($0) }
        } catch {
            logger.notice("notification batch failed as a whole; storing and applying it step by step", metadata: ["error": "\(error)"])
        }
        do {
            return try await run(batch, isolated: true, storedHeaders: storedHeaders, provider: provider, engine: engine, logger: logger).map { .success($0) }
        } catch {
            return batch.map { _ in .failure(error) }
        }
    }

    private struct UnisolatedFailure: Error {
        var id: String
        var error: any Error
    }

    private static func run(
        _ batch: [Item], isolated: Bool, storedHeaders: Set<String>, provider: any DatabaseProvider, engine: LifecycleEngine, logger: Logger
    ) async throws -> [Bool] {
        try await provider.withTransaction { db -> [Bool] in
            let now = Date()
            // Without isolation every new message is applied in this transaction or the transaction fails as a
            // whole, so its row can go in as processed; a duplicate's row is not inserted at all.
            let processed = isolated ? [] : Set(batch.compactMap { $0.message == nil ? nil : $0.received.id })
            let inserted = try await NotificationInbox.insertRows(
                batch.map(\.received), processed: processed, storedHeaders: storedHeaders, now: now, on: db)
            let isNew = NotificationInbox.firstOccurrences(batch.map(\.received.id), inserted: inserted)
            let messages = zip(batch, isNew).compactMap { item, new in new ? item.message : nil }
                .sorted { ($0.signedDate, $0.id) < ($1.signedDate, $1.id) }
            guard isolated else {
                let failed = try await engine.apply(messages, isolated: false, now: now, on: db)
                // The unisolated engine throws rather than reporting; should it ever report, the isolated re-run
                // decides message by message.
                if let (id, error) = failed.first { throw UnisolatedFailure(id: id, error: error) }
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
