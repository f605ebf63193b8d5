import Foundation

/// How ``AppStoreServerAPIClient`` retries retryable failures: bounded exponential back-off that honours
/// `Retry-After`, with an injectable sleep and clock so tests run instantly.
public struct AppStoreServerAPIRetryPolicy: Sendable {
    /// Attempts in total, the first included (1 = never retry).
    public var maxAttempts: Int
    /// Delay before the first retry.
    public var initialDelay: Duration
    /// Longest delay between attempts. A `Retry-After` further away than this is not waited for: the error
    /// is thrown at once with ``AppStoreServerAPIError/retryAfter`` set, so the caller can schedule.
    public var maxDelay: Duration
    /// Growth factor of the delay per retry.
    public var multiplier: Double
    /// Randomise each back-off delay down to half its value, so many clients do not retry in lock-step.
    public var jitter: Bool
    /// Waits between attempts.
    public var sleep: @Sendable (Duration) async throws -> Void
    /// The current time, to turn `Retry-After` into a delay.
    public var now: @Sendable () -> Date

    public init(
        maxAttempts: Int = 3,
        initialDelay: Duration = .milliseconds(500),
        maxDelay: Duration = .seconds(30),
        multiplier: Double = 2,
        jitter: Bool = true,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.multiplier = max(1, multiplier)
        self.jitter = jitter
        self.sleep = sleep
        self.now = now
    }

    /// Three attempts, 0.5 s doubling, at most 30 s apart.
    public static var `default`: Self { Self() }
    /// A single attempt: every error is thrown at once.
    public static var none: Self { Self(maxAttempts: 1) }

    /// The back-off before retry number `retry` (1 for the first retry), capped at ``maxDelay``.
    public func backoffDelay(retry: Int) -> Duration {
        let seconds = Self.seconds(initialDelay) * pow(multiplier, Double(max(0, retry - 1)))
        var capped = min(seconds, Self.seconds(maxDelay))
        if jitter { capped *= Double.random(in: 0.5...1.0) }
        return .nanoseconds(Int64((capped * 1e9).rounded()))
    }

    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
