import NIOPosix

/// Runs tasks on the one thread that also runs the SQLite connection's statements.
///
/// sqlite-nio executes every statement on the connection's `NIOThreadPool` and resumes the caller through a
/// continuation, so a transaction of a dozen statements crosses between threads two dozen times, each crossing a
/// wake-up of a sleeping thread. A task that prefers this executor submits its statement to the same single-thread
/// pool it is running on: the thread runs the statement next and resumes the task right away, with no other
/// thread involved.
///
/// Once the pool has shut down, jobs go to the global executor instead of being dropped: a task that still holds
/// the connection then sees its statements fail rather than never resuming.
final class SQLiteConnectionExecutor: TaskExecutor {
    let pool: NIOThreadPool

    /// Starts a pool of exactly one thread: the connection's statements and the tasks preferring this executor
    /// share it.
    init() {
        pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pool.submit { state in
            switch state {
            case .active:
                job.runSynchronously(on: self.asUnownedTaskExecutor())
            case .cancelled:
                globalConcurrentExecutor.enqueue(ExecutorJob(job))
            }
        }
    }

    /// Stops the thread after the work already submitted.
    func shutdown() async {
        try? await pool.shutdownGracefully()
    }
}
