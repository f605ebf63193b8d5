import StorekeeperTestSupport
import Testing

@testable import StorekeeperStorage

/// `AsyncLock`: one holder at a time, waiters served first come first served, no lost wake-ups, and the lock
/// released when the body throws.
@Suite struct AsyncLockTests {
    /// State touched only under the lock under test; its read-modify-write spans a suspension, so without mutual
    /// exclusion increments would be lost and more than one holder would be seen inside.
    final class Guarded: @unchecked Sendable {
        var count = 0
        var inside = 0
        var mostInside = 0
    }

    /// What a holder's body throws.
    struct Boom: Error {}

    // MARK: Tests

    @Test func oneHolderAtATimeAmongAHundredTasks() async throws {
        let lock = AsyncLock()
        let guarded = Guarded()
        try await TimeLimit.run("100 holders") {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<100 {
                    group.addTask {
                        await lock.withLock {
                            guarded.inside += 1
                            guarded.mostInside = max(guarded.mostInside, guarded.inside)
                            let read = guarded.count
                            await Task.yield()
                            guarded.count = read + 1
                            guarded.inside -= 1
                        }
                    }
                }
            }
        }
        await lock.withLock {
            #expect(guarded.count == 100)
            #expect(guarded.mostInside == 1)
        }
    }

    /// Waiters queued while the lock is held get it in the order they asked for it.
    @Test func waitersAreServedInArrivalOrder() async throws {
        let lock = AsyncLock()
        let order = LockedBox<[Int]>([])
        await lock.lock()
        try await TimeLimit.run("10 queued waiters") {
            var waiters: [Task<Void, any Error>] = []
            for waiter in 0..<10 {
                waiters.append(try await QueuedTask.start { await lock.withLock { order.withLock { $0.append(waiter) } } })
            }
            #expect(order.value.isEmpty, "nobody gets a held lock")
            lock.unlock()
            for waiter in waiters { try await waiter.value }
        }
        #expect(order.value == Array(0..<10))
    }

    /// Many short holds with hand-offs on every unlock: every lock() is eventually answered.
    @Test func noWakeUpIsLostUnderChurn() async throws {
        let lock = AsyncLock()
        let guarded = Guarded()
        try await TimeLimit.run("50 × 200 holds") {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        for round in 0..<200 {
                            await lock.lock()
                            guarded.count += 1
                            lock.unlock()
                            if round.isMultiple(of: 7) { await Task.yield() }
                        }
                    }
                }
            }
        }
        await lock.withLock { #expect(guarded.count == 10_000) }
    }

    @Test func aThrowingBodyReleasesTheLock() async throws {
        let lock = AsyncLock()
        await #expect(throws: Boom.self) {
            try await lock.withLock { () async throws -> Int in throw Boom() }
        }
        #expect(try await TimeLimit.run("the next holder") { await lock.withLock { 42 } } == 42)
    }

    /// A holder that throws while others wait hands the lock on: every waiter still runs.
    @Test func aThrowingHolderHandsTheLockToItsWaiters() async throws {
        let lock = AsyncLock()
        let latch = TestLatch()
        let ran = LockedBox(0)
        try await TimeLimit.run("waiters behind a throwing holder") {
            try await withThrowingTaskGroup(of: Void.self) { group in
                let holding = LockedBox(false)
                group.addTask {
                    await #expect(throws: Boom.self) {
                        try await lock.withLock { () async throws -> Void in
                            holding.withLock { $0 = true }
                            await latch.wait()
                            throw Boom()
                        }
                    }
                }
                try await TimeLimit.poll("the holder holds") { holding.value }
                for _ in 0..<5 { group.addTask { await lock.withLock { ran.withLock { $0 += 1 } } } }
                try await Task.sleep(for: .milliseconds(50))
                latch.open()
                try await group.waitForAll()
            }
        }
        #expect(ran.value == 5)
    }

    /// `lock()` has no cancellation path: a cancelled waiter still takes its turn (and releases), so the waiters
    /// behind it are not stranded.
    @Test func aCancelledWaiterStillTakesItsTurn() async throws {
        let lock = AsyncLock()
        let order = LockedBox<[String]>([])
        await lock.lock()
        try await TimeLimit.run("waiters after a cancelled one") {
            let cancelled = try await QueuedTask.start { await lock.withLock { order.withLock { $0.append("cancelled") } } }
            let next = try await QueuedTask.start { await lock.withLock { order.withLock { $0.append("next") } } }
            cancelled.cancel()
            lock.unlock()
            try await cancelled.value
            try await next.value
        }
        #expect(order.value == ["cancelled", "next"])
    }
}
