import Logging
import ServiceLifecycle

/// Runs `body` at start and then every `interval` until graceful shutdown; a failed run is logged and the next
/// one comes on schedule.
func runPeriodically(
    _ name: String, every interval: Duration, after ready: ReadinessGate, logger: Logger,
    _ body: @Sendable @escaping () async throws -> Void
) async throws {
    try await cancelWhenGracefulShutdown {
        await ready.wait()
        while !Task.isCancelled {
            do {
                try await body()
            } catch is CancellationError {
                return
            } catch {
                logger.error("\(name) failed; next run on schedule", metadata: ["error": "\(error)"])
            }
            try await Task.sleep(for: interval)
        }
    }
}
