/// Starts tasks one after another so that they queue, in the code under test, in the order they were started.
///
/// Code that queues a caller before its first suspension (a lock, a combiner, a gate) cannot say when it has; the
/// task marks that it is running just before the call, and the pause after the mark covers the few synchronous
/// steps from there into the queue.
public enum QueuedTask {
    /// Returns `operation`'s task once it is running and has had time to queue.
    public static func start<T: Sendable>(
        pause: Duration = .milliseconds(50),
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> Task<T, any Error> {
        let running = LockedBox(false)
        let task = Task {
            running.withLock { $0 = true }
            return try await operation()
        }
        try await TimeLimit.poll("the task starts") { running.value }
        try await Task.sleep(for: pause)
        return task
    }
}
