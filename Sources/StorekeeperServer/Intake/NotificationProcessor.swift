import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage
import Synchronization

/// Applies the inbox: claims due notifications (oldest `signedDate` first, leased, skipping other processes'
/// claims on PostgreSQL), applies a batch in one transaction that also marks it processed, and retries failures
/// with backoff until they become dead letters kept with their error.
public final class NotificationProcessor: Service, Sendable {
    let ledger: Ledger
    let configuration: LifecycleConfiguration
    let metrics: ServerMetrics
    let logger: Logger
    let ready: ReadinessGate
    let confirmation: V1Confirmation
    /// Google Play's notifications are confirmed with the Play Developer API (nil: no app sells there).
    let play: PlayConfirmation?
    private let wakeUp = WakeUpSignal()

    init(
        ledger: Ledger,
        confirmation: V1Confirmation,
        play: PlayConfirmation? = nil,
        configuration: LifecycleConfiguration,
        metrics: ServerMetrics,
        ready: ReadinessGate,
        logger: Logger
    ) {
        self.ready = ready
        self.confirmation = confirmation
        self.play = play
        self.ledger = ledger
        self.configuration = configuration
        self.metrics = metrics
        self.logger = logger
    }

    /// Wakes an idle processor (a notification was just stored).
    public func notificationStored() { wakeUp.signal() }

    public func run() async throws {
        try await untilGracefulShutdown {
            try await self.ready.wait()
            while !Task.isCancelled {
                var applied = 0
                do {
                    applied = try await self.processBatch()
                } catch  where Task.isCancelled || error is CancellationError {
                    // Shutting down: the claim's lease runs out and another process (or the next start) takes it.
                    return
                } catch {
                    self.logger.error("notification processing failed; retrying", metadata: ["error": "\(error)"])
                    self.metrics.runLog.fail("process_notifications", error: "\(error)")
                }
                if applied == 0 { await self.wakeUp.wait(timeout: self.configuration.pollInterval) }
            }
        }
    }

    /// Claims and applies one batch; returns how many notifications it claimed.
    @discardableResult
    public func processBatch(now: Date = Date()) async throws -> Int {
        let claimed = try await ledger.claimNotifications(limit: configuration.batchSize, lease: .seconds(120), now: now)
        guard !claimed.isEmpty else { return 0 }
        var messages: [StoreMessage] = []
        var failures: [String: any Error] = [:]
        var final = Set<String>()
        // Messages the store must confirm (V1 bodies, Google Play's) ask it a few at a time: one by one, a batch would
        // wait out every round trip in turn. Signed ones decode here, without a task each.
        var outcomes = [Result<StoreMessage, any Error>?](repeating: nil, count: claimed.count)
        var confirming: [Int] = []
        for (index, stored) in claimed.enumerated() {
            if stored.received.format == "v1" || stored.received.format.hasPrefix("play") {
                confirming.append(index)
            } else {
                do { outcomes[index] = .success(try StoreMessage.decode(stored)) } catch { outcomes[index] = .failure(error) }
            }
        }
        if !confirming.isEmpty {
            let confirmed = await withTaskGroup(of: (Int, Result<StoreMessage, any Error>).self) { group in
                var pending = confirming.makeIterator()
                var results: [(Int, Result<StoreMessage, any Error>)] = []
                results.reserveCapacity(confirming.count)
                for _ in 0..<Self.confirmationConcurrency {
                    guard let index = pending.next() else { break }
                    let stored = claimed[index]
                    group.addTask { (index, await self.confirm(stored)) }
                }
                while let result = await group.next() {
                    results.append(result)
                    if let index = pending.next() {
                        let stored = claimed[index]
                        group.addTask { (index, await self.confirm(stored)) }
                    }
                }
                return results
            }
            for (index, outcome) in confirmed { outcomes[index] = outcome }
        }
        for (stored, outcome) in zip(claimed, outcomes) {
            switch outcome {
            case .success(let message)?: messages.append(message)
            case .failure(let error as V1Confirmation.Unconfirmed)?:
                failures[stored.received.id] = error
                final.insert(stored.received.id)
            case .failure(let error)?: failures[stored.received.id] = error
            case nil: failures[stored.received.id] = LifecycleFailure(description: "not confirmed")
            }
        }
        let attempts = Dictionary(claimed.map { ($0.received.id, $0.attempts) }, uniquingKeysWith: { a, _ in a })
        do {
            for (id, error) in try await ledger.apply(messages, markProcessed: true) { failures[id] = LifecycleFailure(description: error) }
        } catch {
            // The transaction itself failed (the database is down): every message is retried.
            for message in messages { failures[message.id] = error }
        }
        for (id, error) in failures {
            let attempt = attempts[id] ?? 1
            logger.warning(
                "notification not applied; will retry",
                metadata: ["storekeeper.notification.id": "\(id)", "error": "\(error)", "attempt": "\(attempt)"]
            )
            do {
                try await ledger.failNotification(
                    id,
                    error: "\(error)",
                    maxAttempts: final.contains(id) ? 1 : configuration.maxAttempts,
                    retryAfter: Self.backoff(attempt: attempt),
                    now: now
                )
            } catch {
                // The lease runs out and the claim comes back on its own.
            }
        }
        metrics.notificationsProcessed(applied: claimed.count - failures.count, failed: failures.count)
        // An empty poll is not a run worth showing.
        if !claimed.isEmpty { metrics.runLog.record("process_notifications", items: claimed.count) }
        if let failure = failures.first { metrics.runLog.fail("process_notifications", error: "\(failures.count) failed: \(failure)") }
        return claimed.count
    }

    /// How many stored messages are confirmed with their store at once.
    static let confirmationConcurrency = 16

    /// A stored V1 or Google Play notification as a store message, confirmed with its store.
    private func confirm(_ stored: NotificationInbox.Stored) async -> Result<StoreMessage, any Error> {
        do {
            if stored.received.format == "v1" { return .success(try await confirmation.message(for: stored)) }
            guard let play else { throw V1Confirmation.Unconfirmed(description: "no app of this server sells on Google Play") }
            return .success(try await play.message(for: stored))
        } catch {
            return .failure(error)
        }
    }

    /// 1 s, 2 s, 4 s … capped at 10 minutes.
    static func backoff(attempt: Int) -> Duration { .seconds(min(600, 1 << min(max(attempt - 1, 0), 10))) }
}

/// A failure reported across the transaction boundary.
struct LifecycleFailure: Error, CustomStringConvertible {
    let description: String
}
