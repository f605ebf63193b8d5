import Foundation
import SQLKit
import StorekeeperCore

/// `analytics_counts`: Apple's Analytics Reports counts per report day × app × product × territory × measure ×
/// download source, as reconciliation read them.
public enum AnalyticsCountsTable {
    /// Replaces what is kept for `day` of the apps `appAppleIds` with `counts` (per app).
    public static func replace(day: String, counts: [String: [SubscriptionSourcesReport.Count]], on db: any SQLDatabase) async throws {
        guard !counts.isEmpty else { return }
        try await db.raw(
            "DELETE FROM analytics_counts WHERE day = \(bind: day) AND app_apple_id IN (\(binds: counts.keys.sorted()))"
        ).run()
        var merged: [[String]: Int64] = [:]
        for (app, lines) in counts {
            for line in lines {
                merged[[app, line.productId, line.territory, line.measure.rawValue, line.downloadSource], default: 0] += line.counts
            }
        }
        guard !merged.isEmpty else { return }
        var insert = BulkInsert(
            into: "analytics_counts",
            columns: ["day", "app_apple_id", "product_id", "territory", "measure", "download_source", "counts"]
        )
        for (key, total) in merged.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            insert.values([day, key[0], key[1], key[2], key[3], key[4], total])
        }
        try await insert.run(on: db)
    }
}
