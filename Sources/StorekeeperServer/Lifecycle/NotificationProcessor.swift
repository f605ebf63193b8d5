import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore
import StorekeeperStorage
import Synchronization

/// Applies the inbox: claims due notifications (oldest `signedDate` first, leased, skipping other processes'
/// claims on PostgreSQL), applies a batch in one transaction that also marks it processed, and retries failures
/// with backoff until they become dead letters kept with their error.
public final class NotificationProcessor: Service, Sendable {
    let provider: any DatabaseProvider
    let inbox: NotificationInbox
    let engine: LifecycleEngine
    let configuration: LifecycleConfiguration
    let metrics: ServerMetrics
    let logger: Logger
    let ready: ReadinessGate
    let confirmation: V1Confirmation
    private let wakeUp = WakeUpSignal()

    init(
        provider: any DatabaseProvider, inbox: NotificationInbox, engine: LifecycleEngine, confirmation: V1Confirmation,
        configuration: LifecycleConfiguration, metrics: ServerMetrics, ready: ReadinessGate, logger: Logger
    ) {
        self.ready = ready
        self.confirmation = confirmation
        self.provider = provider
        self.inbox = inbox
        self.engine = engine
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
                } catch where Task.isCancelled || error is CancellationError {
                    // Shutting down: the claim's lease runs out and another process (or the next start) takes it.
                    return
                } catch {
                    self.logger.error("notification processing failed; retrying", metadata: ["error": "\(error)"])
                }
                if applied == 0 { await self.wakeUp.wait(timeout: self.configuration.pollInterval) }
            }
        }
    }

    /// Claims and applies one batch; returns how many notifications it claimed.
    @discardableResult
    public func processBatch(now: Date = Date()) async throws -> Int {
        let claimed = try await inbox.claim(limit: configuration.batchSize, lease: .seconds(120), now: now)
        guard !claimed.isEmpty else { return 0 }
        var messages: [LifecycleMessage] = []
        var failures: [String: any Error] = [:]
        var final = Set<String>()
        for stored in claimed {
            do {
                if stored.received.format == "v1" {
                    messages.append(try await confirmation.message(for: stored))
                } else {
                    messages.append(try LifecycleMessage.decode(stored))
                }
            } catch let error as V1Confirmation.Unconfirmed {
                failures[stored.received.id] = error
                final.insert(stored.received.id)
            } catch {
                failures[stored.received.id] = error
            }
        }
        let attempts = Dictionary(claimed.map { ($0.received.id, $0.attempts) }, uniquingKeysWith: { a, _ in a })
        do {
            let engine = self.engine
            let decoded = messages
            let failed = try await provider.withTransaction { db in
                let failed = try await engine.apply(decoded, now: Date(), on: db)
                try await NotificationInbox.markProcessed(
                    decoded.map(\.id).filter { failed[$0] == nil }, now: Date(), on: db)
                return failed.mapValues { "\($0)" }
            }
            for (id, error) in failed { failures[id] = LifecycleFailure(description: error) }
        } catch {
            // The transaction itself failed (the database is down): every message is retried.
            for message in messages { failures[message.id] = error }
        }
        for (id, error) in failures {
            let attempt = attempts[id] ?? 1
            logger.warning(
                "notification not applied; will retry", metadata: ["storekeeper.notification.id": "\(id)", "error": "\(error)", "attempt": "\(attempt)"])
            do {
                try await inbox.markFailed(
                    id, error: "\(error)", maxAttempts: final.contains(id) ? 1 : configuration.maxAttempts,
                    retryAfter: Self.backoff(attempt: attempt))
            } catch {
                // The lease runs out and the claim comes back on its own.
            }
        }
        metrics.notificationsProcessed(applied: claimed.count - failures.count, failed: failures.count)
        return claimed.count
    }

    /// 1 s, 2 s, 4 s … capped at 10 minutes.
    static func backoff(attempt: Int) -> Duration { .seconds(min(600, 1 << min(max(attempt - 1, 0), 10))) }
}

/// A failure reported across the transaction boundary.
struct LifecycleFailure: Error, CustomStringConvertible {
    let description: String
}

/// Lets a sleeping loop be woken early.
final class WakeUpSignal: Sendable {
    private let state = Mutex<(pending: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pending = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns at the next signal (or at once if one came since the last wait), or after `timeout`.
    func wait(timeout: Duration) async {
        let timer = Task { [weak self] in
            do {
                try await Task.sleep(for: timeout)
                self?.signal()
            } catch {
                // Woken before the timeout.
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.pending {
                    state.pending = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
        timer.cancel()
    }
}
