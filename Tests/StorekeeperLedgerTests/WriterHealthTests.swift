import Foundation
import SQLKit
import StorageTestSupport
import StorekeeperCore
import StorekeeperStorage
import Testing

@testable import StorekeeperLedger

/// `/health` reads the writer's last commit besides its own probe: on a full disk the probe's one-row update still
/// commits while every purchase fails (issue 30, item 20).
@Suite struct WriterHealthTests {
    @Test func aFullDiskFailsTheWriterWhileTheProbeStillCommitsAndHealthSeesIt() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sk-full-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let provider = try await SQLiteDatabaseProvider(location: .file(path))
        try await StorageHarness.closing(provider) {
            let ledger = try await LedgerFixtures.ledger(on: provider)
            try await ledger.probe(instance: "test")
            _ = try await LedgerFixtures.deliver(
                ledger,
                LedgerFixtures.transaction("t-0", product: LedgerFixtures.coins),
                product: LedgerFixtures.coins,
                to: "ann"
            )
            #expect(ledger.recentWriteFailure(within: 30) == nil)

            // The disk fills: the database may not grow by a single page (SQLite's SQLITE_FULL, as on a full disk).
            try await provider.withSession { db in
                let pages = try await db.raw("PRAGMA page_count").first()!.decode(column: "page_count", as: Int64.self)
                _ = try await db.raw("PRAGMA max_page_count = \(unsafeRaw: String(pages))").all()
            }
            let signed = String(repeating: "x", count: 64 * 1024)
            var failures = 0
            for index in 1...20 {
                let transaction = LedgerFixtures.transaction("t-\(index)", product: LedgerFixtures.coins, signedData: signed)
                do {
                    _ = try await LedgerFixtures.deliver(ledger, transaction, product: LedgerFixtures.coins, to: "ann")
                } catch {
                    failures += 1
                }
            }
            #expect(failures == 20, "no purchase fits")
            // The probe rewrites its row in place: it still commits, which is why it cannot be the only check.
            try await ledger.probe(instance: "test")
            let reason = try #require(ledger.recentWriteFailure(within: 30))
            #expect(reason.contains("full"), "\(reason)")
            #expect(ledger.recentWriteFailure(within: 30, now: Date().addingTimeInterval(60)) == nil, "a failure long past no longer decides")

            // Space again: the next commit clears it.
            try await provider.withSession { db in _ = try await db.raw("PRAGMA max_page_count = 1073741823").all() }
            _ = try await LedgerFixtures.deliver(
                ledger,
                LedgerFixtures.transaction("t-ok", product: LedgerFixtures.coins),
                product: LedgerFixtures.coins,
                to: "ann"
            )
            #expect(ledger.recentWriteFailure(within: 30) == nil)
            #expect(try await LedgerFixtures.balance(provider, "ann") == 20)
        }
    }
}
