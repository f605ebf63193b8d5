import Dispatch
import NIOPosix

/// A task executor that runs jobs on the one thread that also runs a SQLite connection's calls.
///
/// sqlite-nio runs every statement on its thread pool and resumes the caller afterwards. On the shared cooperative
/// pool each resumption queues behind whatever else is runnable (under load, hundreds of signature checks), and
/// hopping between threads costs a wake-up each way, so one write transaction of twenty statements took many times
/// its own CPU time while the single writer everything waits on sat idle. Work that prefers this executor runs on
/// the connection's own thread instead: a statement and the code around it take turns on one thread, in order.
final class ConnectionThreadExecutor: TaskExecutor, Sendable {
    let threadPool: NIOThreadPool

    /// - Parameter threadPool: a started pool of exactly one thread, the one the connection uses.
    init(threadPool: NIOThreadPool) {
        self.threadPool = threadPool
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        threadPool.submit { state in
            guard case .cancelled = state else {
                job.runSynchronously(on: executor)
                return
            }
            // A stopped pool calls back at once, on the thread that is enqueueing — often in the middle of another
            // job, where running this one would nest jobs. It still runs (its statements then fail with the pool's
            // error) so no task is left suspended, but later, on a thread of its own.
            DispatchQueue.global().async { job.runSynchronously(on: executor) }
        }
    }
}
