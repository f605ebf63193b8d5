import Logging
import SQLKit
import ServiceLifecycle
import StorekeeperStorage
import StorekeeperTestSupport
import Testing

/// `BatchCombiner` under real concurrency, in both drain modes: every submission processed exactly once, in batches
/// no larger than the maximum, each caller answered with the output at its own position.
@Suite struct BatchCombinerTests {
    /// `dedicatedDrainer` off (a submitter drains) and on (the combiner's own task drains).
    static let modes = [false, true]

    /// Where a caller's output came from: the batch (numbered from 1), the position in it, and the input there.
    struct Slot: Sendable, Equatable {
        let batch: Int
        let position: Int
        let input: Int
    }

    /// The per-item failure `process` reports for odd inputs.
    struct OddInput: Error, Equatable {
        let input: Int
    }

    // MARK: Tests

    @Test(arguments: modes)
    func everyItemIsProcessedOnceAndAnsweredToItsOwnCaller(dedicatedDrainer: Bool) async throws {
        let batches = LockedBox<[[Int]]>([])
        let combiner = BatchCombiner<Int, String>(maximumBatch: 16, dedicatedDrainer: dedicatedDrainer) { batch in
            batches.withLock { $0.append(batch) }
            // A pause per batch, as a commit would take, lets concurrent submissions pile up behind it.
            try? await Task.sleep(for: .milliseconds(1))
            return batch.map { "out-\($0)" }
        }
        // 8 submitters, each with 50 items in flight at once.
        let answers = try await TimeLimit.run("8 × 50 submissions") {
            await withTaskGroup(of: [(Int, String)].self) { submitters in
                for submitter in 0..<8 {
                    submitters.addTask {
                        await withTaskGroup(of: (Int, String).self) { items in
                            for item in 0..<50 {
                                let input = submitter * 50 + item
                                items.addTask { (input, await combiner.submit(input)) }
                            }
                            return await items.reduce(into: []) { $0.append($1) }
                        }
                    }
                }
                return await submitters.reduce(into: []) { $0 += $1 }
            }
        }
        #expect(answers.count == 400)
        #expect(answers.allSatisfy { input, output in output == "out-\(input)" })
        let processed = batches.value
        #expect(processed.flatMap { $0 }.sorted() == Array(0..<400), "each item processed exactly once")
        #expect(processed.allSatisfy { (1...16).contains($0.count) }, "\(processed.map(\.count))")
        #expect(processed.count < 400, "submissions in flight together share batches")
    }

    /// Eight callers each submitting one item after another keep up to eight items queued; a maximum of three cuts
    /// them into batches of at most three, and nothing is lost or repeated.
    @Test(arguments: modes)
    func sequentialSubmittersStayWithinTheMaximum(dedicatedDrainer: Bool) async throws {
        let batches = LockedBox<[[Int]]>([])
        let combiner = BatchCombiner<Int, Int>(maximumBatch: 3, dedicatedDrainer: dedicatedDrainer) { batch in
            batches.withLock { $0.append(batch) }
            await Task.yield()
            return batch.map { -$0 }
        }
        try await TimeLimit.run("8 sequential submitters") {
            await withTaskGroup(of: Void.self) { group in
                for submitter in 0..<8 {
                    group.addTask {
                        for item in 0..<50 {
                            let input = submitter * 50 + item
                            let output = await combiner.submit(input)
                            #expect(output == -input)
                        }
                    }
                }
            }
        }
        let processed = batches.value
        #expect(processed.flatMap { $0 }.sorted() == Array(0..<400))
        #expect(processed.allSatisfy { (1...3).contains($0.count) }, "\(processed.map(\.count))")
    }

    /// While the first batch is held, ten more submissions queue; once it finishes they run as the next batches,
    /// oldest first, cut at the maximum.
    @Test(arguments: modes, [64, 4])
    func submissionsDuringABatchFormTheNextBatches(dedicatedDrainer: Bool, maximumBatch: Int) async throws {
        let latch = TestLatch()
        let batches = LockedBox<[[Int]]>([])
        let combiner = BatchCombiner<Int, Int>(maximumBatch: maximumBatch, dedicatedDrainer: dedicatedDrainer) { batch in
            batches.withLock { $0.append(batch) }
            if batch.contains(0) { await latch.wait() }
            return batch.map { $0 * 10 }
        }
        let answers = try await TimeLimit.run("held batch and ten more") {
            try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                group.addTask { (0, await combiner.submit(0)) }
                try await TimeLimit.poll("the first batch starts") { batches.value.count == 1 }
                // Queued one after another, so the queue's order is 1 to 10.
                for input in 1...10 {
                    let task = try await QueuedTask.start { await combiner.submit(input) }
                    group.addTask { (input, try await task.value) }
                }
                #expect(batches.value == [[0]], "nothing else runs while the first batch is held")
                latch.open()
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
        }
        #expect(answers == Dictionary(uniqueKeysWithValues: (0...10).map { ($0, $0 * 10) }))
        let expected: [[Int]] = maximumBatch >= 10 ? [[0], Array(1...10)] : [[0], [1, 2, 3, 4], [5, 6, 7, 8], [9, 10]]
        #expect(batches.value == expected)
    }

    /// Outputs go back by position, not by value: equal inputs from different callers each get the output at their
    /// own position, and every position's output reaches exactly one caller.
    @Test(arguments: modes)
    func outputsMapBackToCallersByPosition(dedicatedDrainer: Bool) async throws {
        let batches = LockedBox<[[Int]]>([])
        let combiner = BatchCombiner<Int, Slot>(maximumBatch: 8, dedicatedDrainer: dedicatedDrainer) { batch in
            let number = batches.withLock { batches -> Int in
                batches.append(batch)
                return batches.count
            }
            await Task.yield()
            return batch.enumerated().map { Slot(batch: number, position: $0.offset, input: $0.element) }
        }
        // 16 distinct values, each submitted by 4 callers.
        let answers = try await TimeLimit.run("64 callers") {
            await withTaskGroup(of: (Int, Slot).self) { group in
                for caller in 0..<64 {
                    group.addTask { (caller % 16, await combiner.submit(caller % 16)) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        let processed = batches.value
        #expect(answers.count == 64)
        #expect(Set(answers.map { "\($0.1.batch):\($0.1.position)" }).count == 64, "one slot per caller")
        for (input, slot) in answers {
            #expect(slot.input == input)
            #expect(processed[slot.batch - 1][slot.position] == input)
        }
        #expect(processed.map(\.count).reduce(0, +) == 64)
    }

    /// `process` cannot throw; per-item failures travel as outputs (the stores use `Result`), and one caller's
    /// failure is never another's.
    @Test(arguments: modes)
    func failuresReachOnlyTheirOwnCallers(dedicatedDrainer: Bool) async throws {
        let combiner = BatchCombiner<Int, Result<Int, OddInput>>(maximumBatch: 5, dedicatedDrainer: dedicatedDrainer) { batch in
            await Task.yield()
            return batch.map { $0.isMultiple(of: 2) ? .success($0 / 2) : .failure(OddInput(input: $0)) }
        }
        let answers = try await TimeLimit.run("100 callers") {
            await withTaskGroup(of: (Int, Result<Int, OddInput>).self) { group in
                for input in 0..<100 { group.addTask { (input, await combiner.submit(input)) } }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(answers.count == 100)
        for (input, result) in answers {
            if input.isMultiple(of: 2) {
                #expect(result == .success(input / 2))
            } else {
                #expect(result == .failure(OddInput(input: input)))
            }
        }
    }

    /// `submit` has no cancellation path: an item, once submitted, is processed and answered. A cancelled caller
    /// (the drainer of the held batch, or one queued behind it) still gets its output, and the hand-off to the
    /// next drainer still happens.
    @Test(arguments: modes)
    func cancelledCallersAreStillProcessedAndAnswered(dedicatedDrainer: Bool) async throws {
        let latch = TestLatch()
        let batches = LockedBox<[[Int]]>([])
        let combiner = BatchCombiner<Int, Int>(maximumBatch: 2, dedicatedDrainer: dedicatedDrainer) { batch in
            batches.withLock { $0.append(batch) }
            if batch.contains(0) { await latch.wait() }
            return batch.map { $0 + 100 }
        }
        try await TimeLimit.run("cancelled callers") {
            let first = Task { await combiner.submit(0) }
            try await TimeLimit.poll("the first batch starts") { batches.value.count == 1 }
            let queued = try await QueuedTask.start { await combiner.submit(1) }
            let behind = try await QueuedTask.start { await combiner.submit(2) }
            let last = try await QueuedTask.start { await combiner.submit(3) }
            first.cancel()
            queued.cancel()
            latch.open()
            #expect(await first.value == 100)
            #expect(try await queued.value == 101)
            #expect(try await behind.value == 102)
            #expect(try await last.value == 103)
        }
        #expect(batches.value.flatMap { $0 }.sorted() == [0, 1, 2, 3])
        #expect(batches.value.first == [0])
    }

    /// In the default mode one caller drains for its batch-mates. A transaction begun in a cancelled task throws
    /// `CancellationError` on both databases, so the batch must not run in the draining caller's task, or its
    /// mates would fail for a cancellation that was not theirs.
    @Test
    func aCancelledDrainerDoesNotCancelItsBatchMates() async throws {
        let latch = TestLatch()
        let seen = LockedBox<[(batch: [Int], cancelled: Bool)]>([])
        let combiner = BatchCombiner<Int, Int>(maximumBatch: 8) { batch in
            seen.withLock { $0.append((batch, Task.isCancelled)) }
            if batch.contains(0) { await latch.wait() }
            return batch
        }
        try await TimeLimit.run("batch behind a cancelled drainer") {
            let first = Task { await combiner.submit(0) }
            try await TimeLimit.poll("the first batch starts") { seen.value.count == 1 }
            // 1 queues first, so it drains the next batch, which also holds 2.
            let cancelledDrainer = try await QueuedTask.start { await combiner.submit(1) }
            let bystander = try await QueuedTask.start { await combiner.submit(2) }
            cancelledDrainer.cancel()
            latch.open()
            _ = try await (first.value, cancelledDrainer.value, bystander.value)
        }
        let second = try #require(seen.value.first { $0.batch.contains(2) })
        #expect(second.batch == [1, 2])
        #expect(!second.cancelled, "process for [1, 2] ran in cancelled caller 1's task")
    }

    /// The combiner's drainer service, as its owner runs it.
    struct Drainer: Service {
        let combiner: BatchCombiner<Int, Int>
        func run() async throws { await combiner.run() }
    }

    /// Issue 30 item 15: the dedicated drainer belongs to a lifecycle service. It drains what is queued when graceful
    /// shutdown comes before it returns, and afterwards submitters drain.
    @Test
    func theDrainerServiceDrainsEverythingQueuedAtShutdown() async throws {
        let latch = TestLatch()
        let priorities = LockedBox<[Int]>([])
        let combiner = BatchCombiner<Int, Int>(maximumBatch: 4, dedicatedDrainer: true) { batch in
            priorities.withLock { $0.append(batch.count) }
            if batch.contains(0) { await latch.wait() }
            return batch.map { $0 * 2 }
        }
        var logger = Logger(label: "test.combiner")
        logger.logLevel = .critical
        let group = ServiceGroup(services: [Drainer(combiner: combiner)], gracefulShutdownSignals: [], logger: logger)
        try await TimeLimit.run("the drainer service") {
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                // Until the service drains (its batches run at high priority).
                try await TimeLimit.poll("the service runs") { combiner.drainerIsRunning }
                let first = try await QueuedTask.start { await combiner.submit(0) }
                try await TimeLimit.poll("the first batch starts") { priorities.value.count == 1 }
                let queued = (1...10).map { input in Task { await combiner.submit(input) } }
                try await Task.sleep(for: .milliseconds(50))
                await group.triggerGracefulShutdown()
                latch.open()
                #expect(try await first.value == 0)
                for (index, task) in queued.enumerated() { #expect(await task.value == (index + 1) * 2) }
                try await tasks.waitForAll()
            }
        }
        #expect(!combiner.drainerIsRunning)
        // The service has ended: a submitter drains its own submission.
        #expect(await combiner.submit(21) == 42)
    }
}
