/// When to try a submission again after the server could not answer for it (a transport failure, a 5xx, an answer
/// of `outcome: retry`): exponential backoff with full jitter, capped, so a fleet of devices coming back after an
/// outage does not return in step.
public struct RetryPolicy: Sendable, Hashable {
    /// The ceiling of the first retry's delay.
    public var base: Duration
    /// No delay is longer than this.
    public var cap: Duration

    public init(base: Duration = .seconds(2), cap: Duration = .seconds(600)) {
        self.base = base
        self.cap = max(cap, .zero)
    }

    /// The ceiling of the delay after `attempt` failed attempts (1 for the first): `base · 2^(attempt−1)`, at most `cap`.
    public func ceiling(afterAttempt attempt: Int) -> Duration {
        guard attempt > 0, base > .zero else { return .zero }
        // Past 2^40 every realistic cap is reached; stopping there keeps the multiplication from overflowing.
        let exponent = min(attempt - 1, 40)
        let (scaled, overflow) = base.components.seconds.multipliedReportingOverflow(by: Int64(1) << exponent)
        if overflow || scaled >= cap.components.seconds { return cap }
        return min(base * (1 << exponent), cap)
    }

    /// A delay drawn uniformly from zero to ``ceiling(afterAttempt:)``.
    public func delay(afterAttempt attempt: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        let ceiling = ceiling(afterAttempt: attempt)
        let milliseconds = ceiling.components.seconds * 1_000 + ceiling.components.attoseconds / 1_000_000_000_000_000
        guard milliseconds > 0 else { return .zero }
        return .milliseconds(Int64.random(in: 0...milliseconds, using: &generator))
    }

    /// A delay drawn with the system's generator.
    public func delay(afterAttempt attempt: Int) -> Duration {
        var generator = SystemRandomNumberGenerator()
        return delay(afterAttempt: attempt, using: &generator)
    }
}
