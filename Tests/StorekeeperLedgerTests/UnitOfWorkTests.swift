import Foundation
import Logging
import SQLKit
import StorageTestSupport
import StorekeeperStorage
import Synchronization
import Testing

@testable import StorekeeperLedger

/// A unit of work whose transaction is gone (SQLite rolls one back by itself on a full disk or an I/O error) runs
/// nothing more as if it were still inside it.
@Suite struct UnitOfWorkTests {
    struct Inside: Error {}
    struct Count: Decodable { let n: Int }

    @Test func aLostTransactionFailsEveryLaterSavepointAndTheFinish() async throws {
        try await StorageHarness.withEachProvider { provider in
            try await provider.withSession { db in try await db.raw("CREATE TABLE lost_probe (id TEXT)").run() }
            let kind = provider.kind
            let steps = Mutex<[String]>([])
            // Whatever the end of the transaction reports (SQLite: there is none to commit), the steps are what count.
            _ = try? await provider.withTransaction { db in
                let uow = UnitOfWork(db: db, kind: kind, now: Date(), logger: Logger(label: "test"))
                do {
                    try await uow.savepoint("sk_first") { own in
                        // The transaction ends under the savepoint, as an automatic rollback ends it.
                        try await own.db.raw("ROLLBACK").run()
                        throw Inside()
                    }
                } catch let error as SavepointLost where error.failure is Inside {
                    steps.withLock { $0.append("lost") }
                }
                do {
                    try await uow.savepoint("sk_second") { own in
                        steps.withLock { $0.append("ran") }
                        try await own.db.raw("INSERT INTO lost_probe (id) VALUES ('outside')").run()
                    }
                } catch is SavepointLost {
                    steps.withLock { $0.append("refused") }
                }
                do { try await uow.finish() } catch is SavepointLost { steps.withLock { $0.append("finish refused") } }
            }
            #expect(steps.withLock { $0 } == ["lost", "refused", "finish refused"])
            let count: @Sendable () async throws -> Int? = {
                try await provider.withSession { db in try await db.raw("SELECT count(*) AS n FROM lost_probe").first(decoding: Count.self)?.n }
            }
            #expect(try await count() == 0, "nothing written outside the transaction")
            // The connection goes on with new transactions.
            try await provider.withTransaction { db in try await db.raw("INSERT INTO lost_probe (id) VALUES ('after')").run() }
            #expect(try await count() == 1)
        }
    }
}
