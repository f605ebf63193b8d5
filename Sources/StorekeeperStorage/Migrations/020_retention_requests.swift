import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m020RetentionRequests = Migration("020_retention_requests") { db, _ in
        // Retention Messaging requests answered, so a replayed one is refused (pruned past their freshness).
        let statements: [SQLQueryString] = [
            "CREATE TABLE retention_requests (request_id TEXT PRIMARY KEY, signed_at BIGINT NOT NULL, seen_at BIGINT NOT NULL)",
            "CREATE INDEX retention_requests_by_signed_at ON retention_requests (signed_at)",
        ]
        for statement in statements { try await db.raw(statement).run() }
    }
}
