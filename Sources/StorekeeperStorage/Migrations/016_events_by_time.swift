import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m016EventsByTime = Migration("016_events_by_time") { db, _ in
        // A webhook replay of a time range reads the outbox by when events happened.
        try await db.raw("CREATE INDEX events_by_occurred_at ON events (occurred_at)").run()
    }
}
