import ServiceLifecycle
import Synchronization

/// Combines concurrent submissions into batches processed one batch at a time, without convoys.
///
/// The first submitter becomes the drainer: it processes everything queued, in batches of at most
/// `maximumBatch`, until its own input is done, then hands the drainer role to the oldest waiting submitter (if
/// any) and returns. Every other submitter just waits for its output. Nobody waits for a lock only to learn that
/// their work was already done, which is what turns a lock-based scheme into a queue of one-item batches.
///
/// With `dedicatedDrainer`, the combiner's own service drains instead (``run()``, run by whoever owns the combiner as
/// a lifecycle service): batch after batch back to back, with no hand-off to a waiting submitter between them. Its
/// drainer runs at high priority: it is the one serial stage every submitter waits on, and each of its database
/// calls resumes it through the concurrency runtime, where at default priority it would queue behind the
/// submitters' own request work (verification, parsing) that it is holding up. At graceful shutdown it drains what
/// is queued and returns; submissions while it is not running (before its start, after its end, or in a program
/// that never runs it) are drained by their submitters, as without a dedicated drainer.
public final class BatchCombiner<Input: Sendable, Output: Sendable>: Sendable {
    private enum Signal: Sendable {
        case done(Output)
        case drain
    }

    private struct Entry: Sendable {
        let id: UInt64
        let input: Input
        let continuation: CheckedContinuation<Signal, Never>
    }

    /// The dedicated drainer service: absent, or running (and waiting for work when `waiter` is set).
    private enum Service: Sendable {
        case absent
        case running(waiter: CheckedContinuation<Void, Never>?, stopping: Bool)
    }

    private struct State: Sendable {
        var queue: [Entry] = []
        var draining = false
        var nextId: UInt64 = 0
        var service = Service.absent

        /// Takes the service's waiter, so it can be resumed outside the lock.
        mutating func takeServiceWaiter() -> CheckedContinuation<Void, Never>? {
            guard case .running(let waiter?, let stopping) = service else { return nil }
            service = .running(waiter: nil, stopping: stopping)
            return waiter
        }
    }

    private let state = Mutex(State())
    private let maximumBatch: Int
    private let dedicatedDrainer: Bool
    private let process: @Sendable ([Input]) async -> [Output]

    /// - Parameters:
    ///   - dedicatedDrainer: batches are processed by the combiner's own service (``run()``) while it runs.
    ///   - process: handles one batch, returning one output per input, in order.
    public init(
        maximumBatch: Int,
        dedicatedDrainer: Bool = false,
        process: @escaping @Sendable ([Input]) async -> [Output]
    ) {
        self.maximumBatch = max(1, maximumBatch)
        self.dedicatedDrainer = dedicatedDrainer
        self.process = process
    }

    public func submit(_ input: Input) async -> Output {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextId &+= 1 }
            return state.nextId
        }
        let signal = await withCheckedContinuation { (continuation: CheckedContinuation<Signal, Never>) in
            let (drainNow, service) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
                state.queue.append(Entry(id: id, input: input, continuation: continuation))
                if case .running = state.service { return (false, state.takeServiceWaiter()) }
                if state.draining { return (false, nil) }
                state.draining = true
                return (true, nil)
            }
            service?.resume()
            if drainNow { continuation.resume(returning: .drain) }
        }
        switch signal {
        case .done(let output): return output
        case .drain: return await drain(until: id)
        }
    }

    private func drain(until id: UInt64) async -> Output {
        while true {
            let batch = state.withLock { state -> [Entry] in
                let taken = Array(state.queue.prefix(maximumBatch))
                state.queue.removeFirst(taken.count)
                return taken
            }
            // The drainer's own entry is queued until a batch it runs takes it, so a batch is never empty here. The
            // batch runs in a task of its own: the drainer's caller may be cancelled, and its neighbours' work must
            // not be cancelled with it.
            let inputs = batch.map(\.input)
            let outputs = await Task { await self.process(inputs) }.value
            precondition(outputs.count == batch.count, "a batch must answer every input")
            var mine: Output?
            for (entry, output) in zip(batch, outputs) {
                if entry.id == id { mine = output } else { entry.continuation.resume(returning: .done(output)) }
            }
            if let mine {
                let (successor, service) = state.withLock { state -> (Entry?, CheckedContinuation<Void, Never>?) in
                    // A dedicated drainer started meanwhile: it takes over what is queued.
                    if case .running = state.service {
                        state.draining = false
                        return (nil, state.takeServiceWaiter())
                    }
                    guard let first = state.queue.first else {
                        state.draining = false
                        return (nil, nil)
                    }
                    return (first, nil)
                }
                // The successor's entry stays queued: its own drain takes it first.
                successor?.continuation.resume(returning: .drain)
                service?.resume()
                return mine
            }
        }
    }

    /// Whether the dedicated drainer service is running.
    public var drainerIsRunning: Bool {
        state.withLock { state in
            if case .running = state.service { return true }
            return false
        }
    }

    /// The dedicated drainer, as a lifecycle service: drains batches as they come until graceful shutdown, then what
    /// is still queued, and returns. Does nothing without `dedicatedDrainer`.
    public func run() async {
        guard dedicatedDrainer else { return }
        state.withLock { $0.service = .running(waiter: nil, stopping: false) }
        // A task of its own, at high priority (a task group's child keeps the group's priority on Linux), awaited
        // here: it ends with this service, at graceful shutdown or cancellation, once the queue is drained.
        let drainer = Task(priority: .high) {
            await withGracefulShutdownHandler {
                await self.serve()
            } onGracefulShutdown: {
                self.stop()
            }
        }
        await withTaskCancellationHandler {
            await drainer.value
        } onCancel: {
            self.stop()
        }
    }

    /// Asks the drainer service to drain what is queued and return.
    private func stop() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard case .running(let waiter, _) = state.service else { return nil }
            state.service = .running(waiter: nil, stopping: true)
            return waiter
        }
        waiter?.resume()
    }

    /// What to do next, decided under the lock.
    private enum Step {
        case process([Entry])
        case wait
        case stop
    }

    private func serve() async {
        while true {
            let step = state.withLock { state -> Step in
                // A submitter that was draining when the service started finishes its batch first.
                guard !state.draining else { return .wait }
                let taken = Array(state.queue.prefix(maximumBatch))
                if !taken.isEmpty {
                    state.queue.removeFirst(taken.count)
                    state.draining = true
                    return .process(taken)
                }
                if case .running(_, true) = state.service {
                    // Nothing left: later submissions are drained by their submitters.
                    state.service = .absent
                    return .stop
                }
                return .wait
            }
            switch step {
            case .stop:
                return
            case .process(let batch):
                let outputs = await process(batch.map(\.input))
                precondition(outputs.count == batch.count, "a batch must answer every input")
                state.withLock { $0.draining = false }
                for (entry, output) in zip(batch, outputs) { entry.continuation.resume(returning: .done(output)) }
            case .wait:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = state.withLock { state -> Bool in
                        guard case .running(_, let stopping) = state.service else { return true }
                        if stopping || (!state.draining && !state.queue.isEmpty) { return true }
                        state.service = .running(waiter: continuation, stopping: false)
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            }
        }
    }
}
