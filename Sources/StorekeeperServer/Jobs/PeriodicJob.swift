import Logging
import ServiceLifecycle

/// Runs `body` at start and then every `interval` until graceful shutdown; a failed run is logged and the next
/// one comes on schedule. Shutdown (or the group's cancellation, when the start failed) ends it normally.
func runPeriodically(
    _ name: String,
    every interval: Duration,
    after ready: ReadinessGate,
    logger: Logger,
    job: String? = nil,
    runLog: JobRunLog? = nil,
    _ body: @Sendable @escaping () async throws -> Void
) async throws {
    try await untilGracefulShutdown {
        try await ready.wait()
        while !Task.isCancelled {
            do {
                try await body()
            } catch  where Task.isCancelled || error is CancellationError {
                return
            } catch {
                logger.error("\(name) failed; next run on schedule", metadata: ["error": "\(error)"])
                runLog?.fail(job ?? name, error: "\(error)")
            }
            try await Task.sleep(for: interval)
        }
    }
}

/// Runs `body` until graceful shutdown cancels it. The cancellation shutdown causes is how a long-running service
/// is asked to stop, so it ends the service normally instead of failing the group (which would exit non-zero).
func untilGracefulShutdown(_ body: @Sendable @escaping () async throws -> Void) async throws {
    do {
        try await cancelWhenGracefulShutdown(body)
    } catch is CancellationError {
        // Stopped as asked.
    }
}
