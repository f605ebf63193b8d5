import Foundation
import SQLKit
import StorekeeperCore

extension StorekeeperSchema {
    static let m024AnalyticsCounts = Migration("024_analytics_counts") { db, _ in
        // Apple's Analytics Reports counts per report day, as reconciliation read them: by product, territory,
        // measure and the app's download source (the reports' new dimension), replaced when a day is read again.
        try await db.raw(
            """
            CREATE TABLE analytics_counts (day TEXT NOT NULL, app_apple_id TEXT NOT NULL, product_id TEXT NOT NULL,
                territory TEXT NOT NULL, measure TEXT NOT NULL, download_source TEXT NOT NULL, counts BIGINT NOT NULL,
                PRIMARY KEY (day, app_apple_id, product_id, territory, measure, download_source))
            """
        ).run()
    }
}
