import Foundation
import Testing

@testable import StorekeeperKit

/// The journal keeps what it was given across restarts, refuses to forget a file it cannot read, and leaves
/// nothing half-written behind.
@Suite struct PurchaseJournalTests {
    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sk-journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func purchase(_ id: String, at offset: TimeInterval = 0) -> PurchaseJournal.Entry {
        .init(id: id, payload: .purchase(signedTransaction: "header.payload-\(id).signature", orderId: "order-\(id)"), createdAt: start + offset)
    }

    // MARK: Tests

    @Test func entriesSurviveAReopenInOrder() async throws {
        let folder = try Self.directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("journal.json")
        let journal = try PurchaseJournal(url: url)
        #expect(try await journal.record(Self.purchase("2000000001", at: 5)))
        let spend = PurchaseJournal.Entry(
            id: "spend-1",
            payload: .spend(amount: 25, idempotencyKey: "spend-1", reason: "chapter 3"),
            createdAt: Self.start
        )
        #expect(try await journal.record(spend))

        let reopened = try PurchaseJournal(url: url)
        let entries = await reopened.all()
        #expect(entries.map(\.id) == ["spend-1", "2000000001"])
        #expect(entries[0] == spend)
        #expect(entries[1] == Self.purchase("2000000001", at: 5))
    }

    @Test func recordingTheSameTransactionTwiceKeepsTheFirst() async throws {
        let folder = try Self.directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let journal = try PurchaseJournal(url: folder.appendingPathComponent("journal.json"))
        #expect(try await journal.record(Self.purchase("1")))
        var later = Self.purchase("1", at: 60)
        later.payload = .purchase(signedTransaction: "other", orderId: nil)
        #expect(try await !journal.record(later))
        #expect(await journal.all() == [Self.purchase("1")])
    }

    @Test func aFailedAttemptIsCountedAndWaitsItsTurn() async throws {
        let folder = try Self.directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("journal.json")
        let journal = try PurchaseJournal(url: url)
        try await journal.record(Self.purchase("1"))
        try await journal.record(Self.purchase("2", at: 1))
        try await journal.recordAttempt("1", error: "server unreachable", retryAt: Self.start + 30)

        #expect(await journal.due(at: Self.start + 10).map(\.id) == ["2"])
        #expect(await journal.due(at: Self.start + 30).map(\.id) == ["1", "2"])
        let reopened = try PurchaseJournal(url: url)
        let first = try #require(await reopened.all().first)
        #expect(first.attempts == 1 && first.lastError == "server unreachable" && first.notBefore == Self.start + 30)

        try await reopened.remove("1")
        #expect(try await PurchaseJournal(url: url).all().map(\.id) == ["2"])
    }

    @Test func theFileIsTheOwnersOnly() async throws {
        let folder = try Self.directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("journal.json")
        try await PurchaseJournal(url: url).record(Self.purchase("1"))
        let permissions = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
    }

    /// A process killed mid-write leaves a temporary file beside the journal; the journal it replaced is intact.
    @Test func anInterruptedWriteLeavesTheLastJournal() async throws {
        let folder = try Self.directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("journal.json")
        try await PurchaseJournal(url: url).record(Self.purchase("1"))
        let torn = folder.appendingPathComponent("journal.json.tmp-\(UUID().uuidString)")
        try Data("[{\"id\":\"2\",\"payl".utf8).write(to: torn)

        let reopened = try PurchaseJournal(url: url)
        #expect(await reopened.all() == [Self.purchase("1")])
        #expect(!FileManager.default.fileExists(atPath: torn.path), "the leftover is cleaned up")
    }

    /// Losing purchases silently is worse than stopping: an unreadable journal is an error, and stays on disk.
    @Test func anUnreadableJournalIsAnErrorNotAnEmptyOne() async throws {
        let folder = try Self.directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("journal.json")
        try Data("not json".utf8).write(to: url)
        #expect(throws: PurchaseJournal.Unreadable.self) { try PurchaseJournal(url: url) }
        #expect(FileManager.default.contents(atPath: url.path) == Data("not json".utf8))
    }

    /// Many writers at once (listeners, the purchase flow, the retry loop) each land; nothing is overwritten.
    @Test func concurrentRecordsAllLand() async throws {
        let folder = try Self.directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("journal.json")
        let journal = try PurchaseJournal(url: url)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                group.addTask { try await journal.record(Self.purchase("\(index)", at: TimeInterval(index))) }
            }
            try await group.waitForAll()
        }
        #expect(try await PurchaseJournal(url: url).all().map(\.id) == (0..<50).map(String.init))
    }
}
