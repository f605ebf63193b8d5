import Foundation
import Synchronization

/// What each background job did last in this process — when it ran, how many items it handled, its last error — for
/// the console's Jobs page (every process keeps its own; Prometheus has the counters across processes).
public final class JobRunLog: Sendable {
    /// One job's record.
    public struct Entry: Sendable, Hashable {
        public var runs = 0
        public var lastRun: Date?
        public var lastItems: Int?
        public var failures = 0
        public var lastError: String?
        public var lastErrorAt: Date?
    }

    private let entries = Mutex<[String: Entry]>([:])

    public init() {}

    public func record(_ job: String, items: Int, at: Date = Date()) {
        entries.withLock {
            var entry = $0[job] ?? Entry()
            entry.runs += 1
            entry.lastRun = at
            entry.lastItems = items
            $0[job] = entry
        }
    }

    public func fail(_ job: String, error: String, at: Date = Date()) {
        entries.withLock {
            var entry = $0[job] ?? Entry()
            entry.failures += 1
            entry.lastError = String(error.prefix(500))
            entry.lastErrorAt = at
            $0[job] = entry
        }
    }

    public func entry(_ job: String) -> Entry? { entries.withLock { $0[job] } }
}
