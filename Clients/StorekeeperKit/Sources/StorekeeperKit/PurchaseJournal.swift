import Foundation

/// What the app must not lose before the server has answered for it: a signed transaction to submit, or a wallet
/// spend with the idempotency key it will be sent with.
///
/// The journal is written before anything else is done with an entry (before the network call, before StoreKit's
/// `finish()`), and an entry leaves it only once the server answered for good. Every change replaces the file
/// atomically and durably: a new file is written beside it, flushed with `fsync`, renamed over the old one, and the
/// directory is flushed, so a process killed at any moment leaves the old journal or the new one, never a torn one.
public actor PurchaseJournal {
    /// One thing to deliver to the server.
    public struct Entry: Codable, Sendable, Hashable, Identifiable {
        /// What to send.
        public enum Payload: Codable, Sendable, Hashable {
            /// A StoreKit transaction as Apple signed it, with the order it completes when known.
            case purchase(signedTransaction: String, orderId: String?)
            /// Coins to spend, sent with `idempotencyKey` on every attempt so the server charges once.
            case spend(amount: Int64, idempotencyKey: String, reason: String?)
        }

        /// The transaction id for a purchase, the idempotency key for a spend.
        public var id: String
        public var payload: Payload
        public var createdAt: Date
        /// Attempts made so far.
        public var attempts: Int
        /// Not to be tried again before this moment.
        public var notBefore: Date
        /// Why the last attempt did not settle it.
        public var lastError: String?

        public init(id: String, payload: Payload, createdAt: Date) {
            self.id = id
            self.payload = payload
            self.createdAt = createdAt
            self.attempts = 0
            self.notBefore = createdAt
            self.lastError = nil
        }
    }

    /// A journal file that exists and cannot be read. It is left in place for the app (or a person) to look at:
    /// treating it as empty would lose purchases.
    public struct Unreadable: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "the purchase journal at \(path) cannot be read: \(reason)" }
    }

    /// A write that did not reach the disk; the journal in memory is unchanged.
    public struct WriteFailed: Error, CustomStringConvertible {
        public var path: String
        public var step: String
        public var errno: Int32
        public var description: String { "the purchase journal at \(path) was not written (\(step) failed, errno \(errno))" }
    }

    private let url: URL
    private var entries: [String: Entry]

    /// Opens the journal at `url` (created on the first write), removing what an interrupted write left beside it.
    public init(url: URL) throws {
        self.url = url
        let directory = url.deletingLastPathComponent()
        let prefix = url.lastPathComponent + ".tmp-"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] where name.hasPrefix(prefix) {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            entries = [:]
            return
        }
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .millisecondsSince1970
            let list = try decoder.decode([Entry].self, from: data)
            entries = Dictionary(list.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        } catch {
            throw Unreadable(path: url.path, reason: "\(error)")
        }
    }

    /// Records `entry` durably; `false` (and nothing written) when an entry with its id is already there, so
    /// recording the same transaction from two listeners keeps one.
    @discardableResult
    public func record(_ entry: Entry) throws -> Bool {
        guard entries[entry.id] == nil else { return false }
        var next = entries
        next[entry.id] = entry
        try write(next)
        return true
    }

    /// The earliest moment an entry is due, if any is waiting.
    public func nextDue() -> Date? { entries.values.map(\.notBefore).min() }

    /// Whether an entry with this id is waiting.
    public func contains(_ id: String) -> Bool { entries[id] != nil }

    /// Every entry, oldest first.
    public func all() -> [Entry] {
        entries.values.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    /// The entries whose next attempt is due at `now`, oldest first.
    public func due(at now: Date) -> [Entry] {
        all().filter { $0.notBefore <= now }
    }

    /// Records a failed attempt: counted, with its reason, and not retried before `retryAt`.
    public func recordAttempt(_ id: String, error: String, retryAt: Date) throws {
        guard var entry = entries[id] else { return }
        entry.attempts = entry.attempts == Int.max ? Int.max : entry.attempts + 1
        entry.lastError = String(error.prefix(500))
        entry.notBefore = retryAt
        var next = entries
        next[id] = entry
        try write(next)
    }

    /// Removes an entry the server answered for good (delivered, or rejected).
    public func remove(_ id: String) throws {
        guard entries[id] != nil else { return }
        var next = entries
        next[id] = nil
        try write(next)
    }

    /// Replaces the file with `next`, then adopts it: a failed write leaves both the file and memory as they were.
    private func write(_ next: [String: Entry]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .millisecondsSince1970
        let list = next.values.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        let data = try encoder.encode(list)
        let directory = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let temporary = directory.appendingPathComponent(url.lastPathComponent + ".tmp-" + UUID().uuidString)
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw WriteFailed(path: url.path, step: "open", errno: errno) }
        var closed = false
        defer {
            if !closed { close(descriptor) }
        }
        try data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    unlink(temporary.path)
                    throw WriteFailed(path: url.path, step: "write", errno: errno)
                }
                offset += written
            }
        }
        guard fsync(descriptor) == 0 else {
            unlink(temporary.path)
            throw WriteFailed(path: url.path, step: "fsync", errno: errno)
        }
        close(descriptor)
        closed = true
        guard rename(temporary.path, url.path) == 0 else {
            unlink(temporary.path)
            throw WriteFailed(path: url.path, step: "rename", errno: errno)
        }
        // The rename is durable only once the directory entry is.
        let directoryDescriptor = open(directory.path, O_RDONLY)
        if directoryDescriptor >= 0 {
            _ = fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        // Readable by the app's background work after the first unlock, as StoreKit's listeners need.
        try? FileManager.default.setAttributes(
            [.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication],
            ofItemAtPath: url.path
        )
        #endif
        entries = next
    }
}
