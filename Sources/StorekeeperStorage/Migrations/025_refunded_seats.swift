import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m025RefundedSeats = Migration("025_refunded_seats") { db, _ in
        // Seats of a multiseat purchase Apple refunded (REFUND / SEATS): revenue takes their price back.
        try await db.raw("ALTER TABLE apple_transactions ADD COLUMN refunded_seats INTEGER").run()
    }
}
