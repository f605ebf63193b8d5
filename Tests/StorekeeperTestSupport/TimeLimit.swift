import Synchronization

/// Bounds a test's wait, so a hang (a continuation never resumed, a lost wake-up) fails the test instead of
/// stalling the suite.
///
/// The operation runs in a task of its own, not as a task-group child: a group only returns once every child has,
/// and a child stuck on a continuation that ignores cancellation would hold the test forever. Here the caller
/// gets ``Exceeded`` at the limit, and the stuck task is cancelled and left behind.
///
/// The default limit is generous on purpose: it turns a hang into a failure and times nothing. The whole suite runs
/// at once on a couple of cores, and a chain of a few hundred task hand-offs can wait minutes behind the soak tests.
public enum TimeLimit {
    /// Long enough for any healthy test under full-suite load; far shorter than forever.
    public static let generous: Duration = .seconds(300)

    /// The operation did not finish in time.
    public struct Exceeded: Error, CustomStringConvertible {
        public let limit: Duration
        public let label: String

        public var description: String { "\(label) did not finish within \(limit)" }
    }

    /// Returns the operation's result, or throws ``Exceeded`` once `limit` has passed without one.
    public static func run<T: Sendable>(
        _ label: String = "operation",
        within limit: Duration = generous,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let outcome = Outcome<T>()
        let work = Task {
            do {
                outcome.finish(with: .success(try await operation()))
            } catch {
                outcome.finish(with: .failure(error))
            }
        }
        let timer = Task {
            // Cancelled when the operation finishes first.
            try await Task.sleep(for: limit)
            if outcome.finish(with: .failure(Exceeded(limit: limit, label: label))) { work.cancel() }
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await outcome.value()
        } onCancel: {
            work.cancel()
        }
    }

    /// Returns once `condition` holds, checking every `interval`; throws ``Exceeded`` if it still does not at
    /// `limit`.
    public static func poll(
        _ label: String = "condition",
        within limit: Duration = generous,
        every interval: Duration = .milliseconds(5),
        _ condition: @escaping @Sendable () -> Bool
    ) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        while !condition() {
            guard clock.now < deadline else { throw Exceeded(limit: limit, label: label) }
            try await Task.sleep(for: interval)
        }
    }

    /// The first of the operation's result and the timer's verdict, delivered once to whoever awaits it.
    private final class Outcome<T: Sendable>: Sendable {
        private struct State {
            var result: Result<T, any Error>?
            var waiter: CheckedContinuation<T, any Error>?
        }

        private let state = Mutex(State())

        /// Records the outcome unless one came first; `true` when this one counts.
        @discardableResult
        func finish(with result: Result<T, any Error>) -> Bool {
            let (accepted, waiter) = state.withLock { state -> (Bool, CheckedContinuation<T, any Error>?) in
                guard state.result == nil else { return (false, nil) }
                state.result = result
                defer { state.waiter = nil }
                return (true, state.waiter)
            }
            waiter?.resume(with: result)
            return accepted
        }

        func value() async throws -> T {
            try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { state -> Result<T, any Error>? in
                    if let result = state.result { return result }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        }
    }
}
