import Foundation
import SQLKit
import StorekeeperCore

/// `pending_transactions`: verified purchases nobody could be attributed to, or of products the catalog lacked,
/// kept with what delivering them later needs (a receipt entry has no JWS to read again).
public enum PendingTransactionsTable {
    /// Parks the transactions not parked yet (a second park of one changes nothing).
    public static func insert(_ rows: [(transaction: VerifiedTransaction, reason: String)], now: Date, on db: any SQLDatabase) async throws {
        guard !rows.isEmpty else { return }
        var insert = BulkInsert(
            into: "pending_transactions",
            columns: [
                "transaction_id", "original_transaction_id", "bundle_id", "product_id", "environment", "reason", "signed_data",
                "created_at", "purchase_date", "expires_date", "quantity", "offer_type", "app_account_token", "subscription_group",
                "source", "commerce",
            ],
            suffix: "ON CONFLICT (transaction_id) DO NOTHING"
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for (t, reason) in rows {
            let commerce = t.commerce == TransactionCommerce() ? nil : String(decoding: try encoder.encode(t.commerce), as: UTF8.self)
            insert.values([
                t.transactionId, t.originalTransactionId, t.bundleId, t.productId, t.environment.rawValue, reason, t.signedData, now.millis,
                t.purchaseDate.millis, t.expiresDate?.millis, t.quantity, t.offerType?.rawValue, t.appAccountToken?.uuidString.lowercased(),
                t.subscriptionGroup, t.source.rawValue, commerce,
            ])
        }
        try await insert.run(on: db)
    }

    /// Marks a parked transaction resolved by an operator for a user; whether it was still unresolved.
    public static func resolve(_ transactionId: String, by admin: String, for user: UserID, now: Date, on db: any SQLDatabase) async throws -> Bool {
        try await db.raw(
            """
            UPDATE pending_transactions SET resolved_at = \(bind: now.millis), resolved_by = \(bind: admin),
                assigned_user = \(bind: user.rawValue)
            WHERE transaction_id = \(bind: transactionId) AND resolved_at IS NULL RETURNING transaction_id
            """
        ).first() != nil
    }
}
