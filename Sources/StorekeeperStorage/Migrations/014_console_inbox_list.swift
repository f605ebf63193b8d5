import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m014ConsoleInboxList = Migration("014_console_inbox_list") { db, _ in
        // The console lists a status's notifications newest first (and by type or day within it).
        try await db.raw("CREATE INDEX notifications_by_received ON notifications (status, received_at)").run()
    }
}
