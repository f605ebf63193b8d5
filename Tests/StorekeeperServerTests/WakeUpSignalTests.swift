import StorekeeperTestSupport
import Testing

@testable import StorekeeperServer

/// `WakeUpSignal`: a pending signal is taken at once, a wait without one lasts its timeout, a signal ends a wait
/// early, and a wait woken early leaves nothing behind to wake the next one.
@Suite struct WakeUpSignalTests {
    static let clock = ContinuousClock()

    @Test func aSignalBeforeTheWaitIsTakenAtOnce() async throws {
        let signal = WakeUpSignal()
        signal.signal()
        // Bounded far below the timeout: only the pending signal can end this wait in time.
        try await TimeLimit.run("the wait after a signal") {
            await signal.wait(timeout: .seconds(3600))
        }
    }

    @Test func withoutASignalTheWaitLastsItsTimeout() async throws {
        let signal = WakeUpSignal()
        let start = Self.clock.now
        try await TimeLimit.run("a wait of 150 ms") {
            await signal.wait(timeout: .milliseconds(150))
        }
        #expect(Self.clock.now - start >= .milliseconds(150))
    }

    @Test func aSignalWakesAWaiterEarly() async throws {
        let signal = WakeUpSignal()
        let waiter = Task { await signal.wait(timeout: .seconds(3600)) }
        try await Task.sleep(for: .milliseconds(50))
        signal.signal()
        try await TimeLimit.run("the signalled wait") { await waiter.value }
    }

    /// Signals are a flag, not a count: two before a wait satisfy that one wait only.
    @Test func signalsBeforeAWaitCoalesce() async throws {
        let signal = WakeUpSignal()
        signal.signal()
        signal.signal()
        try await TimeLimit.run("the first wait") { await signal.wait(timeout: .seconds(3600)) }
        let start = Self.clock.now
        try await TimeLimit.run("the second wait") { await signal.wait(timeout: .milliseconds(150)) }
        #expect(Self.clock.now - start >= .milliseconds(150), "the second signal was not kept for the next wait")
    }

    /// A wait that a signal ends stops its timer, which would otherwise signal later and cut the next wait short.
    @Test func anEarlyWakeUpLeavesNoTimerBehind() async throws {
        let signal = WakeUpSignal()
        signal.signal()
        try await TimeLimit.run("the woken wait") { await signal.wait(timeout: .milliseconds(100)) }
        let start = Self.clock.now
        try await TimeLimit.run("the next wait") { await signal.wait(timeout: .milliseconds(500)) }
        #expect(Self.clock.now - start >= .milliseconds(500))
    }

    /// Repeated signal-and-wait rounds between two tasks: every signal is seen, none is lost.
    @Test func aLoopIsWokenByEverySignal() async throws {
        let signal = WakeUpSignal()
        let rounds = LockedBox(0)
        try await TimeLimit.run("200 rounds") {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for _ in 0..<200 {
                        await signal.wait(timeout: .seconds(3600))
                        rounds.withLock { $0 += 1 }
                    }
                }
                group.addTask {
                    for round in 0..<200 {
                        signal.signal()
                        // The next signal only once the loop took this one, so none coalesce.
                        while rounds.value <= round { await Task.yield() }
                    }
                }
            }
        }
        #expect(rounds.value == 200)
    }

    /// A processor shutting down is cancelled while it sleeps here; it should stop sleeping then, not at the end of
    /// the poll interval (`lifecycle.pollMilliseconds`, up to 60 s).
    @Test
    func aCancelledWaitReturnsPromptly() async throws {
        let signal = WakeUpSignal()
        let waiter = Task { await signal.wait(timeout: .seconds(3600)) }
        try await Task.sleep(for: .milliseconds(50))
        waiter.cancel()
        try await TimeLimit.run("the cancelled wait") { await waiter.value }
    }

    /// Issue 30 item 15: several tasks may wait on one signal; one signal wakes every one of them (with one waiter
    /// slot, the second wait replaced the first, which then slept out its whole timeout).
    @Test
    func oneSignalWakesEveryWaiter() async throws {
        let signal = WakeUpSignal()
        let waiting = LockedBox(0)
        try await TimeLimit.run("three waiters") {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        waiting.withLock { $0 += 1 }
                        await signal.wait(timeout: .seconds(3600))
                    }
                }
                while waiting.value < 3 { await Task.yield() }
                try? await Task.sleep(for: .milliseconds(50))
                signal.signal()
                await group.waitForAll()
            }
        }
    }
}
