import Foundation
import SQLKit
import StorekeeperCore

/// Reads the pending-recovery list: verified purchases nobody could be attributed to, or of products the catalog
/// lacked, kept with what delivering them later needs (the ledger parks and assigns them).
public struct PendingTransactionStore: Sendable {
    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// A verified transaction waiting on the list.
    public struct Item: Sendable, Hashable {
        public var transactionId: String
        public var originalTransactionId: String
        public var bundleId: String
        public var productId: String
        public var environment: String
        public var reason: String
        public var signedData: String?
        public var commerce: TransactionCommerce
        public var createdAt: Date
    }

    /// Transactions waiting, oldest first.
    public func list(limit: Int = 200) async throws -> [Item] {
        try await provider.withSession { db in
            try await db.raw(
                """
                SELECT transaction_id, original_transaction_id, bundle_id, product_id, environment, reason, signed_data, commerce,
                    created_at
                FROM pending_transactions p WHERE resolved_at IS NULL
                  AND NOT EXISTS (SELECT 1 FROM store_transactions a WHERE a.transaction_id = p.transaction_id)
                ORDER BY created_at LIMIT \(bind: limit)
                """
            ).all().map { row in
                Item(
                    transactionId: try row.decode(column: "transaction_id", as: String.self),
                    originalTransactionId: try row.decode(column: "original_transaction_id", as: String.self),
                    bundleId: try row.decode(column: "bundle_id", as: String.self),
                    productId: try row.decode(column: "product_id", as: String.self),
                    environment: try row.decode(column: "environment", as: String.self),
                    reason: try row.decode(column: "reason", as: String.self),
                    signedData: try row.decode(column: "signed_data", as: String?.self),
                    commerce: try Self.commerce(try row.decode(column: "commerce", as: String?.self)),
                    createdAt: Date(millis: try row.decode(column: "created_at", as: Int64.self))
                )
            }
        }
    }

    /// A parked transaction as it was verified, to deliver now; nil when it was never parked, a 409 when it is
    /// resolved or delivered already.
    public func parkedTransaction(_ transactionId: String) async throws -> VerifiedTransaction? {
        try await provider.withSession { db in
            guard
                let row = try await db.raw(
                    """
                    SELECT p.*, (SELECT 1 FROM store_transactions a WHERE a.transaction_id = p.transaction_id) AS delivered
                    FROM pending_transactions p WHERE transaction_id = \(bind: transactionId)
                    """
                ).first()
            else { return nil }
            if try row.decode(column: "resolved_at", as: Int64?.self) != nil || row.decode(column: "delivered", as: Int64?.self) != nil {
                throw SupportError.notPending(transactionId: transactionId)
            }
            guard let purchase = try row.decode(column: "purchase_date", as: Int64?.self) else {
                // Parked before its details were kept: only a JWS can be read back.
                throw SupportError.parkedWithoutDetails(transactionId: transactionId)
            }
            return VerifiedTransaction(
                transactionId: transactionId,
                originalTransactionId: try row.decode(column: "original_transaction_id", as: String.self),
                bundleId: try row.decode(column: "bundle_id", as: String.self),
                productId: try row.decode(column: "product_id", as: String.self),
                environment: StoreEnvironment(storeName: try row.decode(column: "environment", as: String.self)),
                purchaseDate: Date(millis: purchase),
                expiresDate: try row.decode(column: "expires_date", as: Int64?.self).map(Date.init(millis:)),
                quantity: Int(try row.decode(column: "quantity", as: Int64?.self) ?? 1),
                appAccountToken: try row.decode(column: "app_account_token", as: String?.self).flatMap(UUID.init(uuidString:)),
                offerType: try row.decode(column: "offer_type", as: Int64?.self).map { OfferKind(rawValue: Int($0)) },
                subscriptionGroup: try row.decode(column: "subscription_group", as: String?.self),
                source: VerifiedTransaction.Source(rawValue: try row.decode(column: "source", as: String?.self) ?? "") ?? .signedTransaction,
                signedData: try row.decode(column: "signed_data", as: String?.self),
                commerce: try Self.commerce(try row.decode(column: "commerce", as: String?.self))
            )
        }
    }

    /// The stored commerce JSON (absent when the transaction carried none, or was parked before it was kept).
    static func commerce(_ json: String?) throws -> TransactionCommerce {
        guard let json else { return TransactionCommerce() }
        return try JSONDecoder().decode(TransactionCommerce.self, from: Data(json.utf8))
    }
}
