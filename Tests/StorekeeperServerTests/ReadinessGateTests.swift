import StorekeeperTestSupport
import Testing

@testable import StorekeeperServer

/// `ReadinessGate`: waiters are released together when it opens, later waits return at once, and a cancelled
/// waiter throws `CancellationError` promptly without upsetting a later `open()`.
@Suite struct ReadinessGateTests {
    @Test func openingReleasesEveryWaiter() async throws {
        let gate = ReadinessGate()
        let released = LockedBox(0)
        try await TimeLimit.run("20 waiters") {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        try await gate.wait()
                        released.withLock { $0 += 1 }
                    }
                }
                try await Task.sleep(for: .milliseconds(50))
                #expect(released.value == 0, "a closed gate holds its waiters")
                gate.open()
                try await group.waitForAll()
            }
        }
        #expect(released.value == 20)
    }

    @Test func anOpenGateReturnsAtOnce() async throws {
        let gate = ReadinessGate()
        gate.open()
        try await TimeLimit.run("waits on an open gate") {
            for _ in 0..<3 { try await gate.wait() }
        }
        gate.open()
        try await TimeLimit.run("a wait after a second open()") { try await gate.wait() }
    }

    @Test func aCancelledWaiterThrowsPromptlyAndALaterOpenIsHarmless() async throws {
        let gate = ReadinessGate()
        let waiter = Task { try await gate.wait() }
        try await Task.sleep(for: .milliseconds(50))
        waiter.cancel()
        let outcome = try await TimeLimit.run("the cancelled waiter") { await waiter.result }
        #expect(throws: CancellationError.self) { try outcome.get() }
        // Its continuation was taken out when it was cancelled: opening must not resume it a second time.
        gate.open()
        try await TimeLimit.run("a wait after open()") { try await gate.wait() }
    }

    @Test func aTaskCancelledBeforeWaitingThrowsAtOnce() async throws {
        let gate = ReadinessGate()
        let started = TestLatch()
        let waiter = Task {
            await started.wait()
            try await gate.wait()
        }
        waiter.cancel()
        started.open()
        let outcome = try await TimeLimit.run("the already cancelled waiter") { await waiter.result }
        #expect(throws: CancellationError.self) { try outcome.get() }
        gate.open()
    }

    /// An open gate wins over cancellation: a cancelled task waiting on it is simply let through.
    @Test func anOpenGateLetsEvenACancelledTaskThrough() async throws {
        let gate = ReadinessGate()
        gate.open()
        let started = TestLatch()
        let waiter = Task {
            await started.wait()
            try await gate.wait()
        }
        waiter.cancel()
        started.open()
        let outcome = try await TimeLimit.run("the cancelled waiter") { await waiter.result }
        #expect(throws: Never.self) { try outcome.get() }
    }

    /// Cancellations racing the opening: every waiter either passes or throws `CancellationError`, each exactly
    /// once (a double resume would crash), and none is left hanging.
    @Test func cancellationsRacingTheOpeningNeitherHangNorCrash() async throws {
        for _ in 0..<20 {
            let gate = ReadinessGate()
            let waiters = (0..<50).map { _ in Task { try await gate.wait() } }
            try await Task.sleep(for: .milliseconds(5))
            for (index, waiter) in waiters.enumerated() where index.isMultiple(of: 2) { waiter.cancel() }
            gate.open()
            for waiter in waiters.reversed() where !waiter.isCancelled { waiter.cancel() }
            let outcomes = try await TimeLimit.run("50 waiters") {
                var outcomes: [Result<Void, any Error>] = []
                for waiter in waiters { outcomes.append(await waiter.result) }
                return outcomes
            }
            for outcome in outcomes {
                if case .failure(let error) = outcome { #expect(error is CancellationError) }
            }
        }
    }
}
