import Foundation
import SQLKit
import StorekeeperCore

/// Reads what is waiting on someone — dead letters, the pending-recovery list, Apple's open refund questions,
/// orders that ran out unpaid — as counts for the business metrics (seed 004's list). Every query is one indexed
/// range, so it can run every few seconds beside a busy write path.
public struct BacklogStore: Sendable {
    /// Counts at one moment.
    public struct Snapshot: Sendable, Hashable {
        /// Notifications by inbox status, for the statuses that need attention (`pending`, `dead`, `rejected`).
        public var notifications: [String: Int] = [:]
        /// Verified purchases on the pending-recovery list, and how long the oldest has waited.
        public var pendingRecovery = 0
        public var oldestPendingRecovery: Date?
        /// Apple's refund questions still unanswered, and those of them past Apple's 12-hour deadline.
        public var consumptionOpen = 0
        public var consumptionOverdue = 0

        public init() {}
    }

    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// The counts as of `now`.
    public func snapshot(now: Date) async throws -> Snapshot {
        try await provider.withSession { db in
            var snapshot = Snapshot()
            for row in try await db.raw(
                "SELECT status, COUNT(*) AS n FROM notifications WHERE status IN ('pending', 'dead', 'rejected') GROUP BY status"
            ).all() {
                snapshot.notifications[try row.decode(column: "status", as: String.self)] = Int(try row.decode(column: "n", as: Int64.self))
            }
            if let row = try await db.raw(
                "SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM pending_transactions WHERE resolved_at IS NULL"
            ).first() {
                snapshot.pendingRecovery = Int(try row.decode(column: "n", as: Int64.self))
                snapshot.oldestPendingRecovery = try row.decode(column: "oldest", as: Int64?.self).map(Date.init(millis:))
            }
            if let row = try await db.raw(
                """
                SELECT COUNT(*) AS n, COALESCE(SUM(CASE WHEN deadline_at < \(bind: now.millis) THEN 1 ELSE 0 END), 0) AS overdue
                FROM consumption_requests WHERE status = 'pending'
                """
            ).first() {
                snapshot.consumptionOpen = Int(try row.decode(column: "n", as: Int64.self))
                snapshot.consumptionOverdue = Int(try row.decode(column: "overdue", as: Int64.self))
            }
            return snapshot
        }
    }

    /// Orders that ran out unpaid in `(after, through]`: created, never delivered, expired in that window.
    public func ordersExpired(after: Date, through: Date) async throws -> Int {
        guard through > after else { return 0 }
        return try await provider.withSession { db in
            let row = try await db.raw(
                """
                SELECT COUNT(*) AS n FROM orders
                WHERE status = 'created' AND expires_at > \(bind: after.millis) AND expires_at <= \(bind: through.millis)
                """
            ).first()
            return Int(try row?.decode(column: "n", as: Int64.self) ?? 0)
        }
    }
}
