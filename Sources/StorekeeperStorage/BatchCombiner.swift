import Synchronization

/// Combines concurrent submissions into batches processed one batch at a time, without convoys.
///
/// The first submitter becomes the drainer: it processes everything queued, in batches of at most
/// `maximumBatch`, until its own input is done, then hands the drainer role to the oldest waiting submitter (if
/// any) and returns. Every other submitter just waits for its output. Nobody waits for a lock only to learn that
/// their work was already done, which is what turns a lock-based scheme into a queue of one-item batches.
///
/// With `dedicatedDrainer`, a task of the combiner's own drains instead, until the queue is empty: batch after
/// batch runs back to back, with no hand-off to a waiting submitter between them. That task runs at high
/// priority: it is the one serial stage every submitter waits on, and each of its database calls resumes it through
/// the concurrency runtime, where at default priority it would queue behind the submitters' own request work
/// (verification, parsing) that it is holding up.
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

    private struct State: Sendable {
        var queue: [Entry] = []
        var draining = false
        var nextId: UInt64 = 0
    }

    private let state = Mutex(State())
    private let maximumBatch: Int
    private let dedicatedDrainer: Bool
    private let process: @Sendable ([Input]) async -> [Output]

    /// - Parameters:
    ///   - dedicatedDrainer: batches are processed by a task of the combiner's own rather than by a submitter.
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
        if dedicatedDrainer { return await submitToDrainer(input) }
        let id = state.withLock { state -> UInt64 in
            defer { state.nextId &+= 1 }
            return state.nextId
        }
        let signal = await withCheckedContinuation { (continuation: CheckedContinuation<Signal, Never>) in
            let drainNow = state.withLock { state -> Bool in
                state.queue.append(Entry(id: id, input: input, continuation: continuation))
                if state.draining { return false }
                state.draining = true
                return true
            }
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
                let successor = state.withLock { state -> Entry? in
                    guard let first = state.queue.first else {
                        state.draining = false
                        return nil
                    }
                    return first
                }
                // The successor's entry stays queued: its own drain takes it first.
                successor?.continuation.resume(returning: .drain)
                return mine
            }
        }
    }

    private func submitToDrainer(_ input: Input) async -> Output {
        let signal = await withCheckedContinuation { (continuation: CheckedContinuation<Signal, Never>) in
            let startDrainer = state.withLock { state -> Bool in
                state.queue.append(Entry(id: state.nextId, input: input, continuation: continuation))
                state.nextId &+= 1
                if state.draining { return false }
                state.draining = true
                return true
            }
            if startDrainer {
                Task(priority: .high) { await self.drainAll() }
            }
        }
        guard case .done(let output) = signal else { preconditionFailure("a dedicated drainer never hands off") }
        return output
    }

    /// Processes batches until the queue is empty; the empty check and giving up the role are one step.
    private func drainAll() async {
        while true {
            let batch = state.withLock { state -> [Entry] in
                let taken = Array(state.queue.prefix(maximumBatch))
                state.queue.removeFirst(taken.count)
                if taken.isEmpty { state.draining = false }
                return taken
            }
            if batch.isEmpty { return }
            let outputs = await process(batch.map(\.input))
            precondition(outputs.count == batch.count, "a batch must answer every input")
            for (entry, output) in zip(batch, outputs) { entry.continuation.resume(returning: .done(output)) }
        }
    }
}
