import Foundation
import Synchronization

/// Console sign-in attempts per operator name and per client address: after ``maximumFailures`` wrong secrets within
/// ``window`` the key is locked for ``lockout`` — every attempt refused without the secret being checked, the right one
/// too — and the lockout logged once. A successful sign-in clears both keys. Kept in this process's memory: each
/// server process counts on its own.
final class SignInThrottle: Sendable {
    static let maximumFailures = 5
    static let window: TimeInterval = 15 * 60
    static let lockout: TimeInterval = 15 * 60

    private struct Record {
        var failures: [Date] = []
        var lockedUntil: Date?
    }

    private let records = Mutex<[String: Record]>([:])

    /// When the sign-in for these keys may be tried again, if any of them is locked now.
    func lockedUntil(_ keys: [String], now: Date = Date()) -> Date? {
        records.withLock { records in
            keys.compactMap { records[$0]?.lockedUntil }.filter { $0 > now }.max()
        }
    }

    /// Records a wrong secret for each key; returns the keys that became locked by it.
    func failed(_ keys: [String], now: Date = Date()) -> [String] {
        records.withLock { records in
            // Bounded: a flood of addresses cannot grow this without limit; the oldest idle records go first.
            if records.count > 10_000 {
                records = records.filter {
                    ($0.value.lockedUntil ?? .distantPast) > now || $0.value.failures.last.map { now.timeIntervalSince($0) < Self.window } == true
                }
            }
            var locked: [String] = []
            for key in keys {
                var record = records[key] ?? Record()
                record.failures = record.failures.filter { now.timeIntervalSince($0) < Self.window } + [now]
                if record.failures.count >= Self.maximumFailures, (record.lockedUntil ?? .distantPast) <= now {
                    record.lockedUntil = now.addingTimeInterval(Self.lockout)
                    record.failures = []
                    locked.append(key)
                }
                records[key] = record
            }
            return locked
        }
    }

    /// A successful sign-in: its keys start afresh.
    func succeeded(_ keys: [String]) {
        records.withLock { records in for key in keys { records[key] = nil } }
    }
}
