import Foundation
import SQLKit
import StorekeeperCore

/// `subscription_receipts`: the latest legacy receipt that proved each subscription, which the renewal sweep sends
/// to `verifyReceipt` again for apps without an App Store Server API key.
public enum SubscriptionReceiptsTable {
    public static func upsert(
        _ rows: [(original: String, bundleId: String, environment: String)],
        receipt: String,
        now: Date,
        on db: any SQLDatabase
    ) async throws {
        guard !rows.isEmpty else { return }
        var insert = BulkInsert(
            into: "subscription_receipts",
            columns: ["original_transaction_id", "bundle_id", "environment", "receipt", "updated_at"],
            suffix: """
                ON CONFLICT (original_transaction_id) DO UPDATE SET receipt = excluded.receipt,
                    environment = excluded.environment, updated_at = excluded.updated_at
                """
        )
        for row in rows.sorted(by: { $0.original < $1.original }) {
            insert.values([row.original, row.bundleId, row.environment, receipt, now.millis])
        }
        try await insert.run(on: db)
    }
}
