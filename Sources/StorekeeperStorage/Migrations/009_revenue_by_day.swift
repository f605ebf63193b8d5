import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m009RevenueByDay = Migration("009_revenue_by_day") { db, _ in
        // The revenue report reads a range of purchase days.
        try await db.raw("CREATE INDEX apple_transactions_by_purchase_date ON apple_transactions (purchase_date)").run()
    }
}
