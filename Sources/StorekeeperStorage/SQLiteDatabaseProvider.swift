import Logging
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit
import SQLiteNIO
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The embedded default: one SQLite file in WAL mode with durable commits (`synchronous = FULL`).
///
/// SQLite has one writer at a time, so work on the connection is serialized by an async lock: callers wait
/// without blocking threads, and a transaction never interleaves with another caller's statements. Reads that may run
/// long (reports, the console) go to read-only connections of their own (``withReader(_:)``): in WAL mode readers
/// see the last commit and run beside the writer, so a year's revenue report does not stall purchases.
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
    /// Read-only connections for ``withReader(_:)`` (none for an in-memory database, which only the writer sees).
    private let readers: [Reader]
    /// The readers' one thread, run at a lower scheduling priority than the writer's and the requests' threads: a long
    /// report then takes the CPU the purchases leave, on a machine with few cores.
    private let readerPool: NIOThreadPool?
    /// How many callers each reader has now, to pick the least busy.
    private let readerLoad: Mutex<[Int]>

    private struct Reader: Sendable {
        let connection: SQLiteConnection
        let database: any SQLDatabase
        let lock = AsyncLock()
    }

    /// Read-only connections beside the writer, unless the caller asks otherwise.
    public static let defaultReaders = 2

    /// Opens (creating if needed) the database and sets WAL, durable commits, foreign keys and a busy timeout.
    /// - Parameter readers: read-only connections for ``withReader(_:)`` (0: reads run on the writer's connection).
    public init(
        location: Location,
        readers readerCount: Int = defaultReaders,
        logger: Logger = Logger(label: "storekeeper.storage.sqlite")
    ) async throws {
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
                storage: storage,
                threadPool: executor.pool,
                logger: logger,
                on: MultiThreadedEventLoopGroup.singleton.any()
            )
        } catch {
            await executor.shutdown()
            throw error
        }
        let database = connection.sql(queryLogLevel: nil)
        self.database = database
        var readers: [Reader] = []
        let readerPool: NIOThreadPool? = readerCount > 0 && location != .memory ? NIOThreadPool(numberOfThreads: 1) : nil
        self.readerPool = readerPool
        if let readerPool {
            readerPool.start()
            readerPool.submit { _ in Self.lowerThisThreadsPriority() }
        }
        do {
            try await Self.configure(database, location: location)
            if case .file(let path) = location, let readerPool {
                for _ in 0..<max(0, min(readerCount, 8)) {
                    let reader = try await SQLiteConnection.open(
                        storage: .file(path: path),
                        threadPool: readerPool,
                        logger: logger,
                        on: MultiThreadedEventLoopGroup.singleton.any()
                    )
                    readers.append(Reader(connection: reader, database: reader.sql(queryLogLevel: nil)))
                    try await reader.sql().raw("PRAGMA query_only = ON").run()
                    try await reader.sql().raw("PRAGMA busy_timeout = 5000").run()
                    try await reader.sql().raw("PRAGMA cache_size = -8192").run()
                }
            }
            self.readers = readers
            self.readerLoad = Mutex(Array(repeating: 0, count: readers.count))
        } catch {
            self.readers = readers
            self.readerLoad = Mutex(Array(repeating: 0, count: readers.count))
            // Closed from a task of its own: sqlite-nio skips work submitted from a cancelled task.
            await Task { try? await self.close() }.value
            throw error
        }
    }

    /// WAL, durable commits, foreign keys, a busy timeout and the cache, on a freshly opened connection.
    private static func configure(_ database: any SQLDatabase, location: Location) async throws {
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

    // A provider released without `close()` — a start that failed after opening, a test that threw — still closes
    // its connection: sqlite-nio traps when an open connection is released, which would take the whole process
    // (a test run, a server reporting its start failure) down with it.
    deinit {
        guard !closed.withLock({ $0 }) else { return }
        let connection = self.connection
        let executor = self.executor
        let readers = self.readers.map(\.connection)
        let readerPool = self.readerPool
        Task {
            for reader in readers { try? await reader.close() }
            try? await readerPool?.shutdownGracefully()
            try? await connection.close()
            await executor.shutdown()
        }
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

    /// Runs `body` on the least busy read-only connection, in one read transaction (a consistent snapshot of the last
    /// commit), beside the writer; an in-memory database has no readers and uses the writer's connection.
    public func withReader<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        guard !readers.isEmpty else { return try await withSession(body) }
        let index = readerLoad.withLock { load -> Int in
            let chosen = load.indices.min { load[$0] < load[$1] } ?? 0
            load[chosen] += 1
            return chosen
        }
        defer { readerLoad.withLock { $0[index] -= 1 } }
        let reader = readers[index]
        return try await reader.lock.withLock {
            try await reader.database.raw("BEGIN").run()
            let value: T
            do {
                value = try await body(reader.database)
            } catch {
                try? await reader.database.raw("ROLLBACK").run()
                throw error
            }
            try? await reader.database.raw("COMMIT").run()
            return value
        }
    }

    /// Runs `body` in one `BEGIN IMMEDIATE … COMMIT` holding the connection, on the connection's own thread: each
    /// statement runs and resumes the body there, with no hand-over between threads (see
    /// `SQLiteConnectionExecutor`). Batching many commands into one transaction is the ledger's job, not this one's.
    public func withTransaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let database = self.database
        return try await withTaskExecutorPreference(executor) {
            try await lock.withLock {
                try await database.raw("BEGIN IMMEDIATE").run()
                let value: T
                do {
                    value = try await body(database)
                } catch {
                    try? await database.raw("ROLLBACK").run()
                    throw error
                }
                do {
                    try await database.raw("COMMIT").run()
                } catch {
                    try? await database.raw("ROLLBACK").run()
                    throw error
                }
                return value
            }
        }
    }

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
        guard
            closed.withLock({ closed in
                defer { closed = true }
                return !closed
            })
        else { return }
        for reader in readers { try? await reader.connection.close() }
        try? await readerPool?.shutdownGracefully()
        do {
            // After the transaction under way, if any: closing beneath it would fail its commit.
            try await lock.withLock { try await connection.close() }
        } catch {
            await executor.shutdown()
            throw error
        }
        await executor.shutdown()
    }
}

extension SQLiteDatabaseProvider {
    /// Nice 10 for the calling thread (Linux schedules threads one by one; elsewhere nothing changes).
    static func lowerThisThreadsPriority() {
        #if os(Linux)
        // Linux keeps the nice value per thread, and `who` 0 names the calling thread (not the whole process).
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #endif
    }
}

/// `close(2)`, out of the reach of the provider's own `close()`.
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}
