import Foundation
import Logging
import PostgresNIO
import SQLKit
import ServiceLifecycle
import StorageTestSupport
import StorekeeperStorage
import Testing

@Suite struct StorageProviderTests {
    static let migrations = [
        Migration("001_deliveries") { database, _ in
            try await database.create(table: "deliveries")
                .column("transaction_id", type: .text, .primaryKey(autoIncrement: false))
                .column("worker", type: .bigint, .notNull)
                .run()
        },
        Migration("002_ledger") { database, _ in
            try await database.create(table: "ledger")
                .column("entry_id", type: .text, .primaryKey(autoIncrement: false))
                .column("amount", type: .bigint, .notNull)
                .run()
        },
    ]

    // MARK: Tests

    @Test func migrationsApplyOnceEvenWhenStartedConcurrently() async throws {
        try await StorageHarness.withEachProvider { provider in
            let migrator = Migrator(migrations: Self.migrations)
            let runs = try await withThrowingTaskGroup(of: [String].self) { group in
                for _ in 0..<4 { group.addTask { try await migrator.migrate(provider) } }
                return try await group.reduce(into: [String]()) { $0 += $1 }
            }
            #expect(runs.sorted() == ["001_deliveries", "002_ledger"], "\(provider.kind)")
            #expect(try await migrator.migrate(provider).isEmpty)
            #expect(try await migrator.applied(provider) == ["001_deliveries", "002_ledger"])
        }
    }

    /// The exactly-once rule: 8 workers race to record the same 50 transactions; each is recorded once, by
    /// exactly one worker, through `INSERT … ON CONFLICT DO NOTHING RETURNING`.
    @Test func uniqueKeysGiveExactlyOnceUnderConcurrency() async throws {
        try await StorageHarness.withEachProvider { provider in
            try await Migrator(migrations: Self.migrations).migrate(provider)
            let winners = try await withThrowingTaskGroup(of: [String].self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        var won: [String] = []
                        for index in 0..<50 {
                            let rows = try await provider.withTransaction { database in
                                try await database.insert(into: "deliveries").columns("transaction_id", "worker")
                                    .values(SQLBind("tx-\(index)"), SQLBind(Int64(worker)))
                                    .ignoringConflicts(with: ["transaction_id"])
                                    .returning("transaction_id").all()
                            }
                            won += try rows.map { try $0.decode(column: "transaction_id", as: String.self) }
                        }
                        return won
                    }
                }
                return try await group.reduce(into: [String]()) { $0 += $1 }
            }
            #expect(winners.count == 50, "\(provider.kind)")
            #expect(Set(winners).count == 50)
            let stored = try await provider.withSession {
                try await $0.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("deliveries").first()?
                    .decode(column: "n", as: Int.self)
            }
            #expect(stored == 50)
        }
    }

    @Test func aThrowingTransactionRollsBack() async throws {
        struct Abort: Error {}
        try await StorageHarness.withEachProvider { provider in
            try await Migrator(migrations: Self.migrations).migrate(provider)
            await #expect(throws: Abort.self) {
                try await provider.withTransaction { database in
                    try await database.insert(into: "ledger").columns("entry_id", "amount").values(SQLBind("e1"), SQLBind(Int64(100))).run()
                    throw Abort()
                }
            }
            let rows = try await provider.withSession { try await $0.select().column("entry_id").from("ledger").all() }
            #expect(rows.isEmpty, "\(provider.kind)")
        }
    }

    @Test func sqliteFilesCommitDurably() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("storekeeper-\(UUID().uuidString).sqlite").path
        let provider = try await SQLiteDatabaseProvider(location: .file(path))
        let journal = try await provider.withSession {
            try await $0.raw("PRAGMA journal_mode").first()?.decode(column: "journal_mode", as: String.self)
        }
        let synchronous = try await provider.withSession {
            try await $0.raw("PRAGMA synchronous").first()?.decode(column: "synchronous", as: Int.self)
        }
        #expect(journal == "wal")
        #expect(synchronous == 2)  // FULL
        try await Migrator(migrations: Self.migrations).migrate(provider)
        try await provider.withTransaction {
            try await $0.insert(into: "ledger").columns("entry_id", "amount").values(SQLBind("e1"), SQLBind(Int64(5))).run()
        }
        try await provider.close()
        // Reopened, the committed row is there.
        let reopened = try await SQLiteDatabaseProvider(location: .file(path))
        let amount = try await reopened.withSession {
            try await $0.select().column("amount").from("ledger").where("entry_id", .equal, "e1").first()?.decode(column: "amount", as: Int64.self)
        }
        #expect(amount == 5)
        try await reopened.close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// Issue 30 item 15: closing waits for the transaction under way, which commits.
    @Test func closingWaitsForTheTransactionUnderWay() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("storekeeper-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let provider = try await SQLiteDatabaseProvider(location: .file(path))
        try await Migrator(migrations: Self.migrations).migrate(provider)
        let begun = AsyncStream<Void>.makeStream()
        async let committed: Void = provider.withTransaction { db in
            try await db.insert(into: "ledger").columns("entry_id", "amount").values(SQLBind("late"), SQLBind(Int64(7))).run()
            begun.continuation.yield()
            try await Task.sleep(for: .milliseconds(300))
        }
        for await _ in begun.stream { break }
        try await provider.close()
        try await committed
        let reopened = try await SQLiteDatabaseProvider(location: .file(path))
        let amount = try await reopened.withSession {
            try await $0.select().column("amount").from("ledger").where("entry_id", .equal, "late").first()?.decode(column: "amount", as: Int64.self)
        }
        #expect(amount == 7)
        try await reopened.close()
    }

    @Test func aClosedSQLiteProviderFailsInsteadOfHanging() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("storekeeper-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let provider = try await SQLiteDatabaseProvider(location: .file(path))
        try await Migrator(migrations: Self.migrations).migrate(provider)
        try await provider.close()
        // Work that prefers the connection's (now stopped) thread still runs and fails with an error.
        await #expect(throws: (any Error).self) {
            try await provider.withTransaction {
                try await $0.insert(into: "ledger").columns("entry_id", "amount").values(SQLBind("late"), SQLBind(Int64(1))).run()
            }
        }
        await #expect(throws: (any Error).self) { try await provider.ping() }
    }

    @Test func aFileThatIsNotADatabaseFailsToOpenWithAnError() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("storekeeper-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        try Data(String(repeating: "not a database, ", count: 512).utf8).write(to: URL(fileURLWithPath: path))
        // The connection opens and its first statement fails: the error reaches the caller, and the connection
        // opened on the way is closed rather than released open (which sqlite-nio traps on).
        await #expect(throws: (any Error).self) { _ = try await SQLiteDatabaseProvider(location: .file(path)) }
    }

    @Test func aProviderReleasedWithoutClosingStillClosesItsConnection() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("storekeeper-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        do {
            let forgotten = try await SQLiteDatabaseProvider(location: .file(path))
            try await Migrator(migrations: Self.migrations).migrate(forgotten)
            try await forgotten.withTransaction {
                try await $0.insert(into: "ledger").columns("entry_id", "amount").values(SQLBind("kept"), SQLBind(Int64(7))).run()
            }
        }
        // Released here without close(): the process goes on (no trap) and the committed row is readable.
        let reopened = try await SQLiteDatabaseProvider(location: .file(path))
        let amount = try await reopened.withSession {
            try await $0.select().column("amount").from("ledger").where("entry_id", .equal, "kept").first()?.decode(column: "amount", as: Int64.self)
        }
        try await reopened.close()
        #expect(amount == 7)
    }

    @Test func backgroundCheckpointsKeepTheWALSmall() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("storekeeper-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let provider = try await SQLiteDatabaseProvider(location: .file(path))
        try await provider.withSession { try await $0.raw("CREATE TABLE blobs (id TEXT PRIMARY KEY, note TEXT NOT NULL)").run() }
        let group = ServiceGroup(services: [provider], gracefulShutdownSignals: [], logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            // About 12 MB of rows, in 400 transactions: far past the writer's own 4,000-page mark if nobody copied.
            let blob = String(repeating: "x", count: 30_000)
            for batch in 0..<400 {
                try await provider.withTransaction { db in
                    try await db.insert(into: "blobs").columns("id", "note").values(SQLBind("b\(batch)"), SQLBind(blob)).run()
                }
            }
            try await Task.sleep(for: .milliseconds(500))
            // Below the writer's own checkpoint mark, so only the background checkpointer can have copied the
            // committed pages into the database file.
            let database = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
            #expect(database > 12_000_000, "database file \(database) bytes")
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        let reopened = try await SQLiteDatabaseProvider(location: .file(path))
        let count = try await reopened.withSession {
            try await $0.raw("SELECT COUNT(*) AS n FROM blobs").first()?.decode(column: "n", as: Int.self)
        }
        try await reopened.close()
        #expect(count == 400)
    }

    @Test func postgresURLsParse() throws {
        let configuration = try PostgresDatabaseProvider.configuration(url: "postgres://sk:secret@127.0.0.1:6543/store")
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 6543)
        #expect(configuration.username == "sk")
        #expect(configuration.database == "store")
        #expect(throws: StorageError.self) { try PostgresDatabaseProvider.configuration(url: "mysql://x@y/z") }
    }
}
