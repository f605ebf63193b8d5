import Testing

@testable import StorekeeperKit

/// Backoff grows, is capped, never overflows, and is spread over the whole interval.
@Suite struct RetryPolicyTests {
    /// A deterministic generator (SplitMix64), so the spread is tested without flakiness.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test func ceilingsDoubleUpToTheCap() {
        let policy = RetryPolicy(base: .seconds(2), cap: .seconds(600))
        #expect(policy.ceiling(afterAttempt: 0) == .zero)
        #expect(policy.ceiling(afterAttempt: 1) == .seconds(2))
        #expect(policy.ceiling(afterAttempt: 2) == .seconds(4))
        #expect(policy.ceiling(afterAttempt: 9) == .seconds(512))
        #expect(policy.ceiling(afterAttempt: 10) == .seconds(600))
        #expect(policy.ceiling(afterAttempt: 64) == .seconds(600))
        #expect(policy.ceiling(afterAttempt: .max) == .seconds(600))
    }

    @Test func aSubSecondBaseStillReachesTheCap() {
        let policy = RetryPolicy(base: .milliseconds(250), cap: .seconds(30))
        #expect(policy.ceiling(afterAttempt: 3) == .seconds(1))
        #expect(policy.ceiling(afterAttempt: 1_000) == .seconds(30))
    }

    @Test func delaysAreSpreadOverTheWholeInterval() {
        let policy = RetryPolicy(base: .seconds(2), cap: .seconds(600))
        var generator = SplitMix(state: 42)
        let delays = (0..<2_000).map { _ in policy.delay(afterAttempt: 5, using: &generator) }
        #expect(delays.allSatisfy { $0 >= .zero && $0 <= .seconds(32) })
        #expect(delays.contains { $0 < .seconds(4) }, "full jitter: short delays happen")
        #expect(delays.contains { $0 > .seconds(28) }, "and long ones")
        #expect(Set(delays).count > 1_500, "not in step")
    }
}

/// Restore requests fit the server's limits: 500 transactions and 1 MB a body (issue 30, item 11).
@Suite struct RestoreChunkTests {
    @Test func chunksStayUnderFiveHundredAndTheBodyLimitInOrder() {
        let big = (0..<700).map { "\($0)-" + String(repeating: "x", count: 3_500) }
        let chunks = Storekeeper.restoreChunks(big)
        #expect(chunks.joined().elementsEqual(big), "every transaction once, in order")
        #expect(chunks.allSatisfy { $0.count <= 500 && $0.reduce(0) { $0 + $1.utf8.count + 3 } <= 768 * 1024 })
        #expect(chunks.count == 4)
        let small = (0..<1_001).map { "t\($0)" }
        #expect(Storekeeper.restoreChunks(small).map(\.count) == [500, 500, 1])
        #expect(Storekeeper.restoreChunks([]).isEmpty)
    }
}
