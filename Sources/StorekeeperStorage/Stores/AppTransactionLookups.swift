import Foundation
import SQLKit
import StorekeeperCore

/// Delivered transactions that came without the app install's `appTransactionId` (legacy receipts, transactions
/// signed before Apple added the field), to be named with Get App Transaction Info; and the answers.
public struct AppTransactionLookups: Sendable {
    /// One original transaction to ask about: all its transactions were made from the same Apple account's install.
    public struct Unnamed: Sendable, Hashable {
        public var originalTransactionId: String
        public var bundleId: String
        public var environment: String
    }

    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// Original transactions of `bundleIds` with a transaction delivered since `since` and no install, oldest first.
    public func unnamed(bundleIds: [String], since: Date, limit: Int) async throws -> [Unnamed] {
        guard !bundleIds.isEmpty else { return [] }
        return try await provider.withSession { db in
            try await db.raw(
                """
                SELECT original_transaction_id, bundle_id, environment, MIN(delivered_at) AS first FROM store_transactions
                WHERE app_transaction_id IS NULL AND app_transaction_error IS NULL AND store = 'app_store'
                  AND delivered_at >= \(bind: since.millis) AND bundle_id IN (\(binds: bundleIds))
                GROUP BY original_transaction_id, bundle_id, environment
                ORDER BY first, original_transaction_id LIMIT \(bind: limit)
                """
            ).all().map {
                Unnamed(
                    originalTransactionId: try $0.decode(column: "original_transaction_id", as: String.self),
                    bundleId: try $0.decode(column: "bundle_id", as: String.self),
                    environment: try $0.decode(column: "environment", as: String.self)
                )
            }
        }
    }
}
