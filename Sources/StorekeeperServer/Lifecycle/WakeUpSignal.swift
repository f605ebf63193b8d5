import Synchronization

/// Lets a sleeping loop be woken early: by a signal, by its timeout, or by its task's cancellation (a job stopping
/// at shutdown must not sleep out its poll interval first).
final class WakeUpSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        var cancelled = false
    }

    private let state = Mutex(State())

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

    /// Returns at the next signal (or at once if one came since the last wait), after `timeout`, or when the task
    /// is cancelled.
    func wait(timeout: Duration) async {
        state.withLock { $0.cancelled = false }
        let timer = Task { [weak self] in
            do {
                try await Task.sleep(for: timeout)
                self?.signal()
            } catch {
                // Woken before the timeout.
            }
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending || state.cancelled || Task.isCancelled {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.cancelled = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
        timer.cancel()
    }
}
