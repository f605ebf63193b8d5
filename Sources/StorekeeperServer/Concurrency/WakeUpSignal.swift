import Synchronization

/// Lets sleeping loops be woken early: by a signal, by their timeout, or by their task's cancellation (a job
/// stopping at shutdown must not sleep out its poll interval first). Any number of tasks may wait at once; a signal
/// wakes them all, and one given while nobody waits wakes the next wait at once.
final class WakeUpSignal: Sendable {
    private struct State {
        var pending = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())

    func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.waiters.isEmpty else {
                state.pending = true
                return []
            }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns at the next signal (or at once if one came while nobody waited), after `timeout`, or when the task
    /// is cancelled.
    func wait(timeout: Duration) async {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextWaiter &+= 1 }
            return state.nextWaiter
        }
        let timer = Task { [weak self] in
            do {
                try await Task.sleep(for: timeout)
                self?.wake(id)
            } catch {
                // Woken before the timeout.
            }
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return true
                    }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            wake(id)
        }
        timer.cancel()
    }

    /// Wakes one waiter (its timeout or its cancellation), if it still waits.
    private func wake(_ id: UInt64) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
    }
}
