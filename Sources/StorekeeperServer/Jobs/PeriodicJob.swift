import Foundation
import Logging
import ServiceLifecycle

/// One of the server's periodic jobs: what a pass does. ``ScheduledJob`` runs it on its schedule and
/// `POST /v1/admin/jobs/{job}/run` on demand; the job itself knows neither.
protocol PeriodicJob: Sendable {
    /// One pass; how many items it handled. `now` is the clock its cutoffs and deadlines are measured on (an operator
    /// may move it forward); a job whose work is stamped with the server's own clock ignores it.
    func runOnce(now: Date) async throws -> Int
}

/// A ``PeriodicJob`` on its schedule, as a lifecycle service: after readiness, at start and then every `interval`
/// until graceful shutdown; a failed pass is logged and kept in the run log, and the next comes on schedule.
struct ScheduledJob: Service {
    /// The job's name in the run log, the admin API and the console (`expire_guests`).
    let name: String
    let job: any PeriodicJob
    let interval: Duration
    let ready: ReadinessGate
    let runLog: JobRunLog
    let logger: Logger

    func run() async throws {
        try await runPeriodically(name, every: interval, after: ready, logger: logger, job: name, runLog: runLog) {
            _ = try await job.runOnce(now: Date())
        }
    }
}

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
