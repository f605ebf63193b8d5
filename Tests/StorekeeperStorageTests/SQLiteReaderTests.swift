import Foundation
import SQLKit
import StorageTestSupport
import Testing

@testable import StorekeeperStorage

/// SQLite's read-only connections run beside the writer (issue 30, item 10): a read while a write transaction is
/// open neither waits for it nor sees its uncommitted rows, and cannot write.
@Suite struct SQLiteReaderTests {
    static func count(_ db: any SQLDatabase) async throws -> Int64 {
        try await db.raw("SELECT COUNT(*) AS n FROM probe").first()!.decode(column: "n", as: Int64.self)
    }

    @Test func aReadRunsBesideAnOpenWriteTransactionAndSeesTheLastCommit() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sk-readers-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let provider = try await SQLiteDatabaseProvider(location: .file(path), readers: 2)
        try await StorageHarness.closing(provider) {
            try await provider.withTransaction { db in
                try await db.raw("CREATE TABLE probe (id INTEGER PRIMARY KEY)").run()
                try await db.raw("INSERT INTO probe (id) VALUES (1)").run()
            }
            let (release, released) = AsyncStream.makeStream(of: Void.self)
            let (opened, isOpen) = AsyncStream.makeStream(of: Void.self)
            let writer = Task {
                try await provider.withTransaction { db in
                    try await db.raw("INSERT INTO probe (id) VALUES (2)").run()
                    isOpen.yield()
                    for await _ in release { break }
                }
            }
            for await _ in opened { break }
            // The writer holds its transaction open: a reader answers now, from the last commit.
            #expect(try await provider.withReader(Self.count) == 1)
            await #expect(throws: (any Error).self, "a reader cannot write") {
                try await provider.withReader { db in try await db.raw("INSERT INTO probe (id) VALUES (3)").run() }
            }
            released.yield()
            try await writer.value
            #expect(try await provider.withReader(Self.count) == 2, "the next read sees the commit")
        }
    }

    @Test func withoutReadersAReadUsesTheWritersConnection() async throws {
        let memory = try await SQLiteDatabaseProvider(location: .memory)
        try await StorageHarness.closing(memory) {
            try await memory.withTransaction { db in
                try await db.raw("CREATE TABLE probe (id INTEGER PRIMARY KEY)").run()
                try await db.raw("INSERT INTO probe (id) VALUES (1)").run()
            }
            #expect(try await memory.withReader(Self.count) == 1, "an in-memory database is the writer's alone")
        }
    }
}
