import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m026PruningIndexes = Migration("026_pruning_indexes") { db, _ in
        // Pruning asks, per event or notification, whether a webhook delivery of it is still pending.
        let statements: [SQLQueryString] = [
            "CREATE INDEX webhook_queue_by_event ON webhook_queue (event_position) WHERE event_position IS NOT NULL",
            "CREATE INDEX webhook_queue_by_notification ON webhook_queue (notification_id) WHERE notification_id IS NOT NULL",
        ]
        for statement in statements { try await db.raw(statement).run() }
    }
}
