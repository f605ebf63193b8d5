import Foundation
import Logging
import StorekeeperCore
import StorekeeperStorage
import Synchronization

/// Runs one batch of the ledger's jobs in one database transaction, so a burst of purchases, notifications and
/// other writes costs a few set-based statements and one durable commit.
///
/// First try: every job together. Notifications go in as processed and are applied in the same transaction; the
/// transactions they carry are planned with the batch's client deliveries in one ``DeliveryPlanner`` run (split down to
/// the failing request if it fails); each other write runs in a savepoint so its failure is its own, and so do the
/// messages' own effects. If anything else fails, the transaction rolls back and the
/// batch runs again isolated: notifications stored pending and applied message by message (a message that still
/// fails stays pending for the processor), each delivery and write in its own savepoint. If that transaction fails
/// too (the database is down), every job gets the error. No job's result is handed out before its commit.
enum LedgerBatch {
    /// Results gathered inside the transaction, handed to the jobs once it committed.
    fileprivate struct Outcome: Sendable {
        var deliveries: [Int: Result<DeliveryResult, any Error>] = [:]
        var inbox: [Int: Bool] = [:]
        var writes: [Int: Result<any Sendable, any Error>] = [:]
    }

    private struct Sorted {
        var deliveries: [(index: Int, job: DeliveryJob)] = []
        var inbox: [(index: Int, job: InboxJob)] = []
        var writes: [(index: Int, job: WriteJob)] = []
    }

    static func run(
        _ jobs: [any LedgerJob],
        provider: any DatabaseProvider,
        rules: LedgerRules,
        storedHeaders: Set<String>,
        health: WriterHealth,
        onRerun: @Sendable (String) -> Void,
        clock: @Sendable () -> Date,
        logger: Logger
    ) async {
        var sorted = Sorted()
        for (index, job) in jobs.enumerated() {
            switch job {
            case let job as DeliveryJob: sorted.deliveries.append((index, job))
            case let job as InboxJob: sorted.inbox.append((index, job))
            case let job as WriteJob: sorted.writes.append((index, job))
            default: break
            }
        }
        let batch = sorted
        let kind = provider.kind
        do {
            let outcome = try await provider.withTransaction { db in
                try await EventsTable.lockLedger(kind: kind, on: db)
                return try await together(
                    batch,
                    uow: UnitOfWork(db: db, kind: kind, now: clock(), logger: logger),
                    rules: rules,
                    storedHeaders: storedHeaders
                )
            }
            hand(outcome, to: batch)
            health.observe(outcome)
            return
        } catch let refused as LoneWriteRefused {
            // Run again alone it would only refuse again.
            for (index, job) in batch.writes where index == refused.index { job.result.withLock { $0 = .failure(refused.error) } }
            return
        } catch {
            onRerun(DatabaseFailure.cause(error))
            logger.notice("a ledger batch failed as a whole; running it again step by step", metadata: ["error": "\(error)"])
        }
        do {
            let outcome = try await provider.withTransaction { db in
                try await EventsTable.lockLedger(kind: kind, on: db)
                return try await isolated(batch, uow: UnitOfWork(db: db, kind: kind, now: clock(), logger: logger), rules: rules, logger: logger)
            }
            hand(outcome, to: batch)
            health.observe(outcome)
        } catch {
            health.failed(error)
            for (_, job) in batch.deliveries { job.result.withLock { $0 = .failure(error) } }
            for (_, job) in batch.inbox { job.result.withLock { $0 = .failure(error) } }
            for (_, job) in batch.writes { job.result.withLock { $0 = .failure(error) } }
        }
    }

    private static func hand(_ outcome: Outcome, to batch: Sorted) {
        for (index, job) in batch.deliveries {
            let result = outcome.deliveries[index] ?? .failure(LedgerError.noResult)
            job.result.withLock { $0 = result }
        }
        for (index, job) in batch.inbox {
            let result: Result<Bool, any Error> =
                outcome.inbox[index].map { .success($0) }
                ?? .failure(LedgerError.noResult)
            job.result.withLock { $0 = result }
        }
        for (index, job) in batch.writes {
            let result = outcome.writes[index] ?? .failure(LedgerError.noResult)
            job.result.withLock { $0 = result }
        }
    }

    /// A batch's only job, a write, refused (a ``StorekeeperFailure`` of its own, not the database's): its
    /// transaction rolls back and it gets the error without a step-by-step rerun.
    private struct LoneWriteRefused: Error {
        var index: Int
        var error: any StorekeeperFailure
    }

    // MARK: Together

    private static func together(_ batch: Sorted, uow: UnitOfWork, rules: LedgerRules, storedHeaders: Set<String>) async throws -> Outcome {
        var outcome = Outcome()
        // Notifications: stored as processed (they are applied in this transaction or it fails as a whole).
        var messages: [PlannedMessage] = []
        if !batch.inbox.isEmpty {
            let received = batch.inbox.map(\.job.received)
            let processed = Set(batch.inbox.compactMap { $0.job.message == nil ? nil : $0.job.received.id })
            let inserted = try await NotificationsTable.insert(
                received,
                processed: processed,
                storedHeaders: storedHeaders,
                now: uow.now,
                on: uow.db
            )
            let isNew = NotificationsTable.firstOccurrences(received.map(\.id), inserted: inserted)
            for ((index, job), new) in zip(batch.inbox, isNew) {
                outcome.inbox[index] = new
                if new, let message = job.message { messages.append(message) }
            }
            messages.sort { ($0.message.signedDate, $0.id) < ($1.message.signedDate, $1.id) }
        }
        // Deliveries: the clients' and the messages' in one plan.
        let (messageRequests, messageIds, unknown) = StoreMessages.deliveries(of: messages, rules: rules)
        try await PendingTransactionsTable.insert(unknown.map { ($0, "unknown product \($0.productId)") }, now: uow.now, on: uow.db)
        let requests = batch.deliveries.map(\.job.request) + messageRequests
        if !requests.isEmpty {
            // A delivery that fails fails alone: the plan is split down to it, and the rest commit with the batch.
            let results = try await DeliveryPlanner.deliverSeparatingFailures(requests, in: uow)
            for ((index, _), result) in zip(batch.deliveries, results) { outcome.deliveries[index] = result }
            let undelivered = try await StoreMessages.settle(
                Array(results.dropFirst(batch.deliveries.count)),
                of: messageRequests,
                messageIds: messageIds,
                in: uow
            )
            // A message whose purchase could not be delivered is not applied: it goes back to pending, with why, for
            // the processor to retry.
            if !undelivered.isEmpty {
                messages.removeAll { undelivered[$0.id] != nil }
                try await NotificationsTable.markPending(undelivered.mapValues { "\($0)" }, now: uow.now, on: uow.db)
            }
        }
        do {
            _ = try await uow.savepoint("sk_effects") { own in
                try await StoreMessages.applyEffects(messages, isolated: false, deliveriesDone: true, rules: rules, in: own)
            }
        } catch {
            // Only the failing messages are held back, not the batch: each applies in a savepoint of its own, and one
            // that fails again goes back to pending for the processor while everything else commits as it is.
            let failed = try await StoreMessages.applyEffects(messages, isolated: true, deliveriesDone: true, rules: rules, in: uow)
            try await NotificationsTable.markPending(failed.mapValues { "\($0)" }, now: uow.now, on: uow.db)
        }
        // Other writes.
        if batch.writes.count == 1, batch.deliveries.isEmpty, batch.inbox.isEmpty {
            let (index, job) = batch.writes[0]
            do {
                outcome.writes[index] = .success(try await job.body(uow))
            } catch let error as any StorekeeperFailure {
                throw LoneWriteRefused(index: index, error: error)
            }
        } else {
            for (index, job) in batch.writes {
                outcome.writes[index] = try await savepointed(job, on: uow)
            }
        }
        try await uow.finish()
        return outcome
    }

    /// A write in a savepoint of its own: its failure rolls back only its own changes (a lost transaction fails the
    /// batch).
    private static func savepointed(_ job: WriteJob, on uow: UnitOfWork) async throws -> Result<any Sendable, any Error> {
        do {
            return .success(
                try await uow.savepoint("sk_write") { own in try await job.body(own) }
            )
        } catch let error as SavepointLost {
            throw error
        } catch {
            return .failure(error)
        }
    }

    // MARK: Isolated

    private static func isolated(_ batch: Sorted, uow: UnitOfWork, rules: LedgerRules, logger: Logger) async throws -> Outcome {
        var outcome = Outcome()
        if !batch.inbox.isEmpty {
            // Stored pending, all of them: storing is what Apple's 200 stands for. Applying is the processor's to
            // retry where it fails here.
            let received = batch.inbox.map(\.job.received)
            let inserted = try await NotificationsTable.insert(received, now: uow.now, on: uow.db)
            let isNew = NotificationsTable.firstOccurrences(received.map(\.id), inserted: inserted)
            var messages: [PlannedMessage] = []
            for ((index, job), new) in zip(batch.inbox, isNew) {
                outcome.inbox[index] = new
                if new, let message = job.message { messages.append(message) }
            }
            messages.sort { ($0.message.signedDate, $0.id) < ($1.message.signedDate, $1.id) }
            do {
                try await uow.savepoint("sk_apply") { own in
                    let failed = try await StoreMessages.applyEffects(
                        messages,
                        isolated: true,
                        deliveriesDone: false,
                        rules: rules,
                        in: own
                    )
                    try await NotificationsTable.markProcessed(
                        messages.map(\.id).filter { failed[$0] == nil },
                        now: uow.now,
                        on: uow.db
                    )
                }
            } catch {
                logger.warning("notifications stored but not applied yet", metadata: ["error": "\(error)"])
            }
        }
        for (index, job) in batch.deliveries {
            do {
                outcome.deliveries[index] = try await uow.savepoint("sk_delivery") { own in
                    try await DeliveryPlanner.deliver([job.request], in: own)[0]
                }
            } catch let error as SavepointLost {
                throw error
            } catch {
                outcome.deliveries[index] = .failure(error)
            }
        }
        for (index, job) in batch.writes {
            outcome.writes[index] = try await savepointed(job, on: uow)
        }
        try await uow.finish()
        return outcome
    }
}

extension WriterHealth {
    /// A batch committed. Its steps fail alone, so it may commit while every step failed on the database itself (a
    /// full disk refuses each new row): that is the writer failing, whatever the commit says.
    fileprivate func observe(_ outcome: LedgerBatch.Outcome) {
        let faults = outcome.deliveries.values.compactMap(\.failure) + outcome.writes.values.compactMap(\.failure)
        if let fault = faults.first(where: DatabaseFailure.isDatabaseFault) { failed(fault) } else { committed() }
    }
}

extension Result {
    /// The error, when this is a failure.
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
