import Foundation
import SQLKit
import StorekeeperCore

/// Reads audit entries (invariant 4: every change has a reason); the ledger writes them.
public struct AuditStore: Sendable {
    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// A user's entries, oldest first, after the entry id `after` (for paging).
    public func entries(for user: UserID, after: Int64 = 0, limit: Int = 200) async throws -> [(id: Int64, entry: AuditEntry)] {
        try await provider.withReader { db in
            try await db.raw(
                """
                SELECT id, user_id, action, subject, amount, period_start, period_end, cause, detail, created_at
                FROM audit_entries WHERE user_id = \(bind: user.rawValue) AND id > \(bind: after)
                ORDER BY id LIMIT \(bind: limit)
                """
            ).all().map(Self.entry)
        }
    }

    /// A user's entries, newest first, before the entry id `before` (all when `nil`): a timeline paging backwards.
    public func latestEntries(for user: UserID, before: Int64? = nil, limit: Int = 200) async throws -> [(id: Int64, entry: AuditEntry)] {
        try await provider.withReader { db in
            try await db.raw(
                """
                SELECT id, user_id, action, subject, amount, period_start, period_end, cause, detail, created_at
                FROM audit_entries WHERE user_id = \(bind: user.rawValue) AND id < \(bind: before ?? Int64.max)
                ORDER BY id DESC LIMIT \(bind: limit)
                """
            ).all().map(Self.entry)
        }
    }

    static func entry(_ row: any SQLRow) throws -> (id: Int64, entry: AuditEntry) {
        (
            try row.decode(column: "id", as: Int64.self),
            AuditEntry(
                action: AuditAction(rawValue: try row.decode(column: "action", as: String.self)),
                user: UserID(rawValue: try row.decode(column: "user_id", as: String.self)),
                subject: try row.decode(column: "subject", as: String.self),
                amount: try row.decode(column: "amount", as: Int64?.self),
                periodStart: try row.decode(column: "period_start", as: Int64?.self).map(Date.init(millis:)),
                periodEnd: try row.decode(column: "period_end", as: Int64?.self).map(Date.init(millis:)),
                cause: AuditCause(rawValue: try row.decode(column: "cause", as: String.self)),
                detail: try row.decode(column: "detail", as: String?.self),
                createdAt: Date(millis: try row.decode(column: "created_at", as: Int64.self))
            )
        )
    }
}
