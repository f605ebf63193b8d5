import Foundation
import SQLKit
import StorekeeperCore

/// Storekeeper's Google Play sales as delivered (production only), for reconciliation against Google's earnings
/// reports: each with its package, and when a refund took it back.
public struct PlaySalesStore: Sendable {
    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// One delivered Play transaction: its id is Google's order id (or `token:` and a digest without one).
    public struct Sale: Sendable, Hashable {
        public var transaction: RevenueTransaction
        public var packageName: String
        /// When a standing refund took it back.
        public var refundedAt: Date?
    }

    private static let columns = """
        t.transaction_id, t.original_transaction_id, t.product_id, t.product_kind, t.environment, t.quantity, t.purchase_date,
        t.expires_date, t.bundle_id, t.price, t.currency, t.storefront, t.storefront_id, t.offer_id, t.offer_discount_type,
        t.offer_period, t.app_transaction_id, t.transaction_reason, t.web_order_line_item_id, t.ownership_type, t.revocation_type,
        t.revocation_percentage, t.refunded_seats, t.store, t.store_fee_permille,
        (SELECT r.revoked_at FROM revocations r WHERE r.transaction_id = t.transaction_id AND r.kind = 'refund'
            AND r.status = 'revoked') AS refunded_at
        """

    /// Production Play sales bought in `[from, to)`, by purchase date.
    public func sales(from: Date, to: Date) async throws -> [Sale] {
        try await provider.withReader { db in
            try await db.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM store_transactions t
                WHERE t.store = 'google_play' AND t.environment = 'Production' AND t.purchase_date >= \(bind: from.millis)
                    AND t.purchase_date < \(bind: to.millis)
                ORDER BY t.purchase_date, t.transaction_id
                """
            ).all().map(Self.sale)
        }
    }

    /// Production Play sales a refund took back in `[from, to)`, whenever they were bought.
    public func refunds(from: Date, to: Date) async throws -> [Sale] {
        try await provider.withReader { db in
            try await db.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM revocations v JOIN store_transactions t ON t.transaction_id = v.transaction_id
                WHERE t.store = 'google_play' AND t.environment = 'Production' AND v.kind = 'refund' AND v.status = 'revoked'
                    AND v.revoked_at >= \(bind: from.millis) AND v.revoked_at < \(bind: to.millis)
                ORDER BY v.revoked_at, t.transaction_id
                """
            ).all().map(Self.sale)
        }
    }

    /// The Play transactions (any environment) with these ids, however old.
    public func sales(ids: [String]) async throws -> [Sale] {
        var found: [Sale] = []
        // A few hundred ids per statement keeps every database under its bind-parameter limit.
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = Array(ids[start..<min(start + 500, ids.count)])
            found += try await provider.withReader { db in
                try await db.raw(
                    """
                    SELECT \(unsafeRaw: Self.columns) FROM store_transactions t
                    WHERE t.store = 'google_play' AND t.transaction_id IN (\(binds: chunk))
                    """
                ).all().map(Self.sale)
            }
        }
        return found
    }

    static func sale(_ row: any SQLRow) throws -> Sale {
        Sale(
            transaction: try RevenueStore.transaction(row),
            packageName: try row.decode(column: "bundle_id", as: String.self),
            refundedAt: try row.decode(column: "refunded_at", as: Int64?.self).map(Date.init(millis:))
        )
    }
}
