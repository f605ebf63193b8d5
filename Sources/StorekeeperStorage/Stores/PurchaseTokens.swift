import Foundation
import SQLKit
import StorekeeperCore

/// Google Play's purchase tokens of delivered transactions: the chain a subscription's tokens form, and the
/// purchases still to acknowledge (or consume) before Google's deadline. Only committed deliveries are read, so an
/// acknowledged purchase is always a credited one.
public struct PurchaseTokens: Sendable {
    /// A delivered purchase the store has not confirmed acknowledged yet.
    public struct Unacknowledged: Sendable, Hashable {
        public var transactionId: String
        public var bundleId: String
        public var productId: String
        public var productKind: ProductKind
        public var purchaseToken: String
        public var acknowledgement: StoreAcknowledgement
        public var environment: String
        public var attempts: Int
        public var user: UserID

        public init(
            transactionId: String,
            bundleId: String,
            productId: String,
            productKind: ProductKind,
            purchaseToken: String,
            acknowledgement: StoreAcknowledgement,
            environment: String,
            attempts: Int,
            user: UserID
        ) {
            self.transactionId = transactionId
            self.bundleId = bundleId
            self.productId = productId
            self.productKind = productKind
            self.purchaseToken = purchaseToken
            self.acknowledgement = acknowledgement
            self.environment = environment
            self.attempts = attempts
            self.user = user
        }
    }

    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// Purchases of `bundleIds` still to acknowledge, soonest deadline first.
    public func unacknowledged(bundleIds: [String], limit: Int) async throws -> [Unacknowledged] {
        guard !bundleIds.isEmpty else { return [] }
        return try await provider.withSession { db in
            try await db.raw(
                """
                SELECT transaction_id, bundle_id, product_id, product_kind, purchase_token, acknowledge_action, acknowledge_by, environment,
                       acknowledge_attempts, user_id
                FROM store_transactions
                WHERE acknowledge_action IS NOT NULL AND acknowledged_at IS NULL AND acknowledge_error IS NULL
                  AND bundle_id IN (\(binds: bundleIds))
                ORDER BY acknowledge_by, transaction_id LIMIT \(bind: limit)
                """
            ).all().compactMap { row in
                guard let action = StoreAcknowledgement.Action(rawValue: try row.decode(column: "acknowledge_action", as: String.self)),
                    let token = try row.decode(column: "purchase_token", as: String?.self)
                else { return nil }
                return Unacknowledged(
                    transactionId: try row.decode(column: "transaction_id", as: String.self),
                    bundleId: try row.decode(column: "bundle_id", as: String.self),
                    productId: try row.decode(column: "product_id", as: String.self),
                    productKind: ProductKind(rawValue: try row.decode(column: "product_kind", as: String.self)) ?? .consumable,
                    purchaseToken: token,
                    acknowledgement: StoreAcknowledgement(
                        action: action,
                        deadline: Date(millis: try row.decode(column: "acknowledge_by", as: Int64.self))
                    ),
                    environment: try row.decode(column: "environment", as: String.self),
                    attempts: try row.decode(column: "acknowledge_attempts", as: Int.self),
                    user: UserID(rawValue: try row.decode(column: "user_id", as: String.self))
                )
            }
        }
    }

    /// The subscription (original transaction id) a delivered purchase token belongs to, if one was delivered.
    public func original(ofPurchaseToken token: String) async throws -> String? {
        try await provider.withSession { db in
            try await db.raw(
                """
                SELECT original_transaction_id FROM store_transactions
                WHERE purchase_token = \(bind: token) AND store = 'google_play' ORDER BY purchase_date LIMIT 1
                """
            ).first()?.decode(column: "original_transaction_id", as: String.self)
        }
    }

    /// When the store confirmed `transactionId` acknowledged, and the reason it never will, if either.
    public func acknowledgement(of transactionId: String) async throws -> (at: Date?, error: String?, attempts: Int)? {
        try await provider.withSession { db in
            guard
                let row = try await db.raw(
                    """
                    SELECT acknowledged_at, acknowledge_error, acknowledge_attempts FROM store_transactions
                    WHERE transaction_id = \(bind: transactionId)
                    """
                ).first()
            else { return nil }
            return (
                try row.decode(column: "acknowledged_at", as: Int64?.self).map(Date.init(millis:)),
                try row.decode(column: "acknowledge_error", as: String?.self),
                try row.decode(column: "acknowledge_attempts", as: Int.self)
            )
        }
    }

    /// A delivered Play purchase, as a refund of it needs it.
    public struct Delivered: Sendable, Hashable {
        public var transactionId: String
        public var original: String
        public var bundleId: String
        public var productId: String
        public var productKind: ProductKind
        public var environment: String
        public var purchaseToken: String
        public var purchaseDate: Date
        public var quantity: Int
    }

    /// The delivered Play purchase with order id `transactionId`, or else the first delivered with `token`.
    public func delivered(transactionId: String?, token: String?) async throws -> Delivered? {
        try await provider.withSession { db in
            var row: (any SQLRow)?
            let columns: SQLQueryString = """
                SELECT transaction_id, original_transaction_id, bundle_id, product_id, product_kind, environment, purchase_token,
                       purchase_date, quantity FROM store_transactions
                """
            if let transactionId {
                row = try await db.raw("\(columns) WHERE transaction_id = \(bind: transactionId) AND store = 'google_play'").first()
            }
            if row == nil, let token {
                row = try await db.raw(
                    "\(columns) WHERE purchase_token = \(bind: token) AND store = 'google_play' ORDER BY purchase_date LIMIT 1"
                ).first()
            }
            guard let row, let token = try row.decode(column: "purchase_token", as: String?.self) else { return nil }
            return Delivered(
                transactionId: try row.decode(column: "transaction_id", as: String.self),
                original: try row.decode(column: "original_transaction_id", as: String.self),
                bundleId: try row.decode(column: "bundle_id", as: String.self),
                productId: try row.decode(column: "product_id", as: String.self),
                productKind: ProductKind(rawValue: try row.decode(column: "product_kind", as: String.self)) ?? .consumable,
                environment: try row.decode(column: "environment", as: String.self),
                purchaseToken: token,
                purchaseDate: Date(millis: try row.decode(column: "purchase_date", as: Int64.self)),
                quantity: try row.decode(column: "quantity", as: Int.self)
            )
        }
    }
}
