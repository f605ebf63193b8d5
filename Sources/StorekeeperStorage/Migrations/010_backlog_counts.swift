import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m010BacklogCounts = Migration("010_backlog_counts") { db, _ in
        // The business metrics count orders that ran out unpaid, by expiry, every few seconds.
        try await db.raw("CREATE INDEX orders_by_status ON orders (status, expires_at)").run()
    }
}
