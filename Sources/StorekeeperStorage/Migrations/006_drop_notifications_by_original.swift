import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m006DropNotificationsByOriginal = Migration("006_drop_notifications_by_original") { db, _ in
        // No query reads notifications by original transaction (processing claims them in signedDate order
        // through notifications_in_order), while every stored notification paid for this index with a write
        // to a random page of it.
        try await db.raw("DROP INDEX notifications_by_original").run()
    }
}
