#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit
import SQLiteNIO
import ServiceLifecycle
import Synchronization

/// The embedded default: one SQLite file in WAL mode with durable commits (`synchronous = FULL`).
///
/// SQLite has one writer at a time, so work on the connection is serialized by an async lock: callers wait
/// without blocking threads, and a transaction never interleaves with another caller's statements.
public final class SQLiteDatabaseProvider: DatabaseProvider, Service {
    public enum Location: Sendable, Hashable {
        case memory
        case file(String)
    }

    public let kind = DatabaseKind.sqlite
    private let connection: SQLiteConnection
    private let executor: SQLiteConnectionExecutor
    private let database: any SQLDatabase
    private let lock = AsyncLock()
    private let closed = Mutex(false)
    private let location: Location
    private let logger: Logger
    private let committer: BatchCombiner<any GroupedWorkItem, Void>

    /// Opens (creating if needed) the database and sets WAL, durable commits, foreign keys and a busy timeout.
    public init(location: Location, logger: Logger = Logger(label: "storekeeper.storage.sqlite")) async throws {
        self.location = location
        self.logger = logger
        let storage: SQLiteConnection.Storage
        switch location {
        case .memory: storage = .memory
        case .file(let path):
            try Self.createPrivately(path)
            storage = .file(path: path)
        }
        let executor = SQLiteConnectionExecutor()
        self.executor = executor
        do {
            connection = try await SQLiteConnection.open(
                storage: storage, threadPool: executor.pool, logger: logger, on: MultiThreadedEventLoopGroup.singleton.any()
            )
        } catch {
            await executor.shutdown()
            throw error
        }
        let database = connection.sql(queryLogLevel: nil)
        self.database = database
        let lock = self.lock
        // The batch runs on the connection's thread: each statement runs and resumes the batch there, with no
        // hand-over between threads (see `SQLiteConnectionExecutor`).
        let process: @Sendable ([any GroupedWorkItem]) async -> [Void] = { batch in
            await withTaskExecutorPreference(executor) {
                await lock.withLock { await SQLiteDatabaseProvider.run(batch, on: database) }
            }
            return batch.map { _ in () }
        }
        committer = BatchCombiner(maximumBatch: 512, process: process)
        if case .file = location {
            try await database.raw("PRAGMA journal_mode = WAL").run()
        }
        // A committed purchase must survive a power cut: fsync at every commit.
        try await database.raw("PRAGMA synchronous = FULL").run()
        try await database.raw("PRAGMA foreign_keys = ON").run()
        try await database.raw("PRAGMA busy_timeout = 5000").run()
        // A batch of webhook bodies dirties a few megabytes: keep them in cache rather than spilling mid-transaction,
        // and keep savepoint journals in memory rather than in temporary files. Not more than 16 MB: a bigger
        // cache measured slower, not faster (64 MB: about 2,800 instead of 3,000–3,300 notifications a second in
        // `bench-notifications`), with SQLite's end-of-transaction cache bookkeeping (`pcache1Truncate`) among the
        // visible costs.
        try await database.raw("PRAGMA cache_size = -16384").run()
        try await database.raw("PRAGMA temp_store = MEMORY").run()
    }

    /// Creates the database file readable by its owner only (it holds signed transactions and user ids); SQLite
    /// gives the WAL and shared-memory files the same mode. An existing file is left as it is.
    static func createPrivately(_ path: String) throws {
        let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            closeDescriptor(descriptor)
            return
        }
        let failure = errno
        guard failure == EEXIST else {
            throw StorageError.configuration("cannot create the SQLite database \(path): \(String(cString: strerror(failure)))")
        }
    }

    public func withSession<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await lock.withLock { try await body(database) }
    }

    /// Runs `body` in a transaction with group commit.
    ///
    /// With `synchronous = FULL` every COMMIT waits for an fsync, which bounds one connection to a few hundred
    /// commits a second. Transactions that arrive while another batch commits are queued; the next holder of the
    /// connection runs every queued body in one `BEGIN IMMEDIATE … COMMIT`, each inside its own savepoint so a
    /// failing body rolls back alone. No caller returns before the COMMIT that made its work durable, and if that
    /// COMMIT fails every body in the batch fails with it.
    public func withTransaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await withoutActuallyEscaping(body) { escapable in
            let work = GroupedWork(body: escapable)
            await committer.submit(work)
            return try work.result()
        }
    }

    private static func run(_ batch: [any GroupedWorkItem], on database: any SQLDatabase) async {
        do {
            try await database.raw("BEGIN IMMEDIATE").run()
        } catch {
            for work in batch { work.fail(error) }
            return
        }
        var succeeded: [any GroupedWorkItem] = []
        do {
            for work in batch {
                if batch.count == 1 {
                    if await work.execute(on: database) { succeeded.append(work) } else { throw BatchAborted() }
                    continue
                }
                try await database.raw("SAVEPOINT storekeeper_work").run()
                if await work.execute(on: database) {
                    try await database.raw("RELEASE storekeeper_work").run()
                    succeeded.append(work)
                } else {
                    try await database.raw("ROLLBACK TO storekeeper_work").run()
                    try await database.raw("RELEASE storekeeper_work").run()
                }
            }
            try await database.raw("COMMIT").run()
            for work in succeeded { work.commit() }
        } catch is BatchAborted {
            // A lone body failed: roll back; it already holds its own error.
            try? await database.raw("ROLLBACK").run()
        } catch {
            try? await database.raw("ROLLBACK").run()
            for work in batch { work.fail(error) }
        }
    }

    private struct BatchAborted: Error {}

    /// Keeps the connection for the service's lifetime, checkpoints the WAL from a second connection meanwhile,
    /// and closes the connection on shutdown.
    public func run() async throws {
        if case .file(let path) = location {
            do {
                try await checkpointContinuously(path: path)
            } catch {
                logger.warning("background WAL checkpoints stopped; the writer checkpoints on its own", metadata: ["error": "\(error)"])
            }
        }
        try? await gracefulShutdown()
        // Closed (and the WAL checkpointed into the file) even when the group cancels this task: sqlite-nio skips
        // work submitted from a cancelled task, and an unclosed connection must never be released.
        try await Task { try await self.close() }.value
    }

    /// Copies committed WAL frames into the database file from a connection of its own, every 100 ms.
    ///
    /// Left to itself the writer checkpoints inside a commit every 1,000 pages — about every fourth batch of
    /// webhook bodies — and every caller in that batch waits for it. A passive checkpoint here runs beside the
    /// writer without blocking it; the writer's own automatic checkpoint stays as a backstop at a higher mark and
    /// then finds almost nothing left to copy, so the WAL still restarts from its beginning and stays small.
    private func checkpointContinuously(path: String) async throws {
        let checkpointer = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        do {
            try await checkpointer.sql().raw("PRAGMA synchronous = FULL").run()
            try await checkpointer.sql().raw("PRAGMA busy_timeout = 1000").run()
            try await withSession { try await $0.raw("PRAGMA wal_autocheckpoint = 4000").run() }
            try await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    try await Task.sleep(for: .milliseconds(100))
                    _ = try await checkpointer.sql().raw("PRAGMA wal_checkpoint(PASSIVE)").all()
                }
            }
        } catch is CancellationError {
            // Shutting down.
        } catch {
            await Self.closeUncancelled(checkpointer)
            throw error
        }
        await Self.closeUncancelled(checkpointer)
    }

    /// Closes a connection even from a cancelled task (sqlite-nio skips work submitted from one, and an unclosed
    /// connection must not be released).
    private static func closeUncancelled(_ connection: SQLiteConnection) async {
        await Task { try? await connection.close() }.value
    }

    /// Closes the connection and stops its thread; closing again does nothing.
    public func close() async throws {
        guard closed.withLock({ closed in defer { closed = true }; return !closed }) else { return }
        do {
            try await connection.close()
        } catch {
            await executor.shutdown()
            throw error
        }
        await executor.shutdown()
    }
}

/// `close(2)`, out of the reach of the provider's own `close()`.
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}

/// A queued transaction body, type-erased so bodies of different result types share one batch.
protocol GroupedWorkItem: Sendable {
    /// Runs the body; `false` when it threw (its error is kept).
    func execute(on database: any SQLDatabase) async -> Bool
    /// The batch committed: the body's result stands.
    func commit()
    /// The batch failed: the body's result is replaced by `error`.
    func fail(_ error: any Error)
}

/// One caller's transaction body and, once its batch ends, its result.
final class GroupedWork<T: Sendable>: GroupedWorkItem {
    private enum State {
        case pending
        case ran(Result<T, any Error>)
        case done(Result<T, any Error>)
    }

    // Dropped as soon as it ran: the caller's closure must not outlive `withoutActuallyEscaping`, while the batch
    // that ran it may still hold this object.
    private let body: Mutex<(@Sendable (any SQLDatabase) async throws -> T)?>
    private let state = Mutex<State>(.pending)

    init(body: @escaping @Sendable (any SQLDatabase) async throws -> T) { self.body = Mutex(body) }

    func execute(on database: any SQLDatabase) async -> Bool {
        guard let body = body.withLock({ slot in defer { slot = nil }; return slot }) else { return false }
        do {
            let value = try await body(database)
            state.withLock { $0 = .ran(.success(value)) }
            return true
        } catch {
            state.withLock { $0 = .done(.failure(error)) }
            return false
        }
    }

    func commit() {
        state.withLock { state in
            if case .ran(let result) = state { state = .done(result) }
        }
    }

    func fail(_ error: any Error) {
        body.withLock { $0 = nil }
        state.withLock { state in
            switch state {
            case .done(.failure): break
            default: state = .done(.failure(error))
            }
        }
    }

    /// The outcome once the batch that ran this work has ended.
    func result() throws -> T {
        let current = state.withLock { $0 }
        guard case .done(let result) = current else {
            throw StorageError.configuration("a grouped transaction ended without a result")
        }
        return try result.get()
    }
}
