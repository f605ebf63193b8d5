import Foundation
import SQLKit
import StorekeeperCore

/// Which delivered consumables Apple has been told are finished (Finish Transaction): the ones still to tell, and
/// the answers. A delivered consumable is finished only after its delivery committed, so a device that is no longer
/// handed the transaction has been credited for it.
public struct FinishedTransactions: Sendable {
    /// A consumable to finish.
    public struct Unfinished: Sendable, Hashable {
        public var transactionId: String
        public var bundleId: String
        public var environment: String
    }

    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// Consumables of `bundleIds` delivered since `since` and not yet finished (nor given up on), oldest first.
    public func unfinished(bundleIds: [String], since: Date, limit: Int) async throws -> [Unfinished] {
        guard !bundleIds.isEmpty else { return [] }
        return try await provider.withSession { db in
            try await db.raw(
                """
                SELECT transaction_id, bundle_id, environment FROM store_transactions
                WHERE finished_at IS NULL AND finish_error IS NULL AND product_kind = 'consumable' AND store = 'app_store'
                  AND delivered_at >= \(bind: since.millis) AND bundle_id IN (\(binds: bundleIds))
                ORDER BY delivered_at LIMIT \(bind: limit)
                """
            ).all().map {
                Unfinished(
                    transactionId: try $0.decode(column: "transaction_id", as: String.self),
                    bundleId: try $0.decode(column: "bundle_id", as: String.self),
                    environment: try $0.decode(column: "environment", as: String.self)
                )
            }
        }
    }

    /// When `id` was finished at Apple, if it was.
    public func finishedAt(_ id: String) async throws -> Date? {
        try await provider.withSession { db in
            try await db.raw("SELECT finished_at FROM store_transactions WHERE transaction_id = \(bind: id)").first()?
                .decode(column: "finished_at", as: Int64?.self).map(Date.init(millis:))
        }
    }
}
