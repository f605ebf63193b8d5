import Foundation
import SQLKit
import StorageTestSupport
import StorekeeperCore
import StorekeeperStorage
import Synchronization
import Testing

@testable import StorekeeperLedger

/// The outbox: every change a consumer cares about is an event written in the change's own transaction, with a
/// per-user sequence that is gap-free and a position that is commit-ordered, on both databases.
@Suite struct OutboxTests {
    typealias F = LedgerFixtures

    @Test func sequencesAreGapFreeAndAPollingReaderMissesNothing() async throws {
        try await StorageHarness.withEachProvider { provider in
            let first = try await F.ledger(on: provider, maximumBatch: 8)
            // A second ledger on the same database stands for a second process: on PostgreSQL its transactions
            // commit concurrently with the first one's.
            let second = try await F.ledger(on: provider, maximumBatch: 8)
            let users = (0..<6).map { "u\($0)" }
            let done = Atomic<Bool>(false)
            // A reader that pages by position while the writers run, as a consumer of the outbox would.
            let reader = Task { () -> [Int64] in
                var seen: [Int64] = []
                var after: Int64 = 0
                while true {
                    let finished = done.load(ordering: .acquiring)
                    let page = try await first.events(after: after, limit: 500)
                    seen += page.map(\.position)
                    after = page.last?.position ?? after
                    if finished && page.isEmpty { return seen }
                    if page.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<90 {
                    let ledger = index % 2 == 0 ? first : second
                    let user = users[index % users.count]
                    group.addTask {
                        _ = try await F.deliver(ledger, F.transaction("t\(index)", product: F.coins), product: F.coins, to: user)
                        _ = try await ledger.spend(user: UserID(rawValue: user), amount: 1, idempotencyKey: "k\(index)", reason: nil)
                    }
                }
                try await group.waitForAll()
            }
            done.store(true, ordering: .releasing)
            let polled = try await reader.value
            let all = try await first.events(after: 0, limit: 10_000)
            // One purchase.delivered per delivery (it carries the coins and the balance) and one wallet.changed per spend.
            #expect(all.count == 90 * 2)
            #expect(polled == all.map(\.position), "a reader paging by position saw every event, in order (\(provider.kind))")
            #expect(Set(all.map(\.position)).count == all.count)
            for user in users {
                let sequence = all.filter { $0.event.user.rawValue == user }.map(\.userSequence)
                #expect(sequence == Array(1...Int64(sequence.count)), "\(user)'s sequence is 1...n without gaps")
            }
            // Exactly one purchase.delivered per delivered transaction, and none for anything else.
            let delivered = all.filter { $0.event.type == .delivered }.map(\.event.subject)
            #expect(delivered.sorted() == (0..<90).map { "t\($0)" }.sorted())
        }
    }

    @Test func aFailedCommandLeavesNoEvent() async throws {
        try await StorageHarness.withEachProvider { provider in
            let ledger = try await F.ledger(on: provider)
            _ = try await F.deliver(ledger, F.transaction("c1", product: F.coins), product: F.coins, to: "ann")
            let before = try await ledger.events(after: 0, limit: 100).count
            // An overdraft is refused: no wallet change, no event.
            let refused = try await ledger.spend(user: UserID(rawValue: "ann"), amount: 500, idempotencyKey: "big", reason: nil)
            #expect(refused == .insufficientFunds(balance: 10))
            // A command that throws inside the ledger's transaction rolls its events back with it.
            await #expect(throws: (any Error).self) {
                try await ledger.write { uow in
                    uow.emit(LedgerEvent(type: .walletChanged, user: UserID(rawValue: "ann"), subject: "coins", occurredAt: uow.now))
                    try await uow.finish()
                    throw StorekeeperError(.conflict, code: "boom", message: "after the event was written")
                }
            }
            #expect(try await ledger.events(after: 0, limit: 100).count == before)
            // And the sequence did not advance either: the next event is ann's next number.
            _ = try await ledger.spend(user: UserID(rawValue: "ann"), amount: 1, idempotencyKey: "small", reason: nil)
            let ann = try await ledger.events(after: 0, user: UserID(rawValue: "ann"), limit: 100).map(\.userSequence)
            #expect(ann == Array(1...Int64(ann.count)))
        }
    }
}
