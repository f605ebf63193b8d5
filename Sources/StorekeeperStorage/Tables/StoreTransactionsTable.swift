import Foundation
import SQLKit
import StorekeeperCore

/// `store_transactions`: every transaction delivered, with its store, keyed by the store's transaction id (Apple's
/// `transactionId`). Its primary key is what makes delivery exactly once (invariant 1).
public enum StoreTransactionsTable {
    /// One delivered transaction.
    public struct Row: Sendable {
        public var transaction: VerifiedTransaction
        public var owner: UserID
        public var productKind: ProductKind
        public var subscriptionGroup: String?
        public var orderId: String?

        public init(transaction: VerifiedTransaction, owner: UserID, productKind: ProductKind, subscriptionGroup: String?, orderId: String?) {
            self.transaction = transaction
            self.owner = owner
            self.productKind = productKind
            self.subscriptionGroup = subscriptionGroup
            self.orderId = orderId
        }
    }

    static let columns = [
        "transaction_id", "original_transaction_id", "user_id", "bundle_id", "product_id", "product_kind", "environment",
        "quantity", "purchase_date", "expires_date", "subscription_group", "offer_type", "app_account_token", "order_id",
        "source", "delivered_at", "signed_data", "price", "currency", "storefront", "storefront_id", "offer_id",
        "offer_discount_type", "offer_period", "app_transaction_id", "transaction_reason", "web_order_line_item_id",
        "ownership_type", "revocation_type", "revocation_percentage", "refunded_seats", "store", "purchase_token",
        "acknowledge_action", "acknowledge_by", "store_fee_permille",
    ]

    /// Inserts the rows whose transaction id is new (`ON CONFLICT DO NOTHING`); returns those ids. The signed data
    /// is stored with its certificate chain shared (``StoredSignedData``).
    public static func insert(_ rows: [Row], now: Date, on db: any SQLDatabase) async throws -> Set<String> {
        guard !rows.isEmpty else { return [] }
        let ordered = rows.sorted { $0.transaction.transactionId < $1.transaction.transactionId }
        let signedData = try await StoredSignedData.prepare(ordered.map(\.transaction.signedData), on: db)
        var insert = BulkInsert(
            into: "store_transactions",
            columns: columns,
            suffix: "ON CONFLICT (transaction_id) DO NOTHING RETURNING transaction_id"
        )
        for (row, signed) in zip(ordered, signedData) {
            let t = row.transaction
            let c = t.commerce
            insert.values([
                t.transactionId, t.originalTransactionId, row.owner.rawValue, t.bundleId, t.productId, row.productKind.rawValue,
                t.environment.rawValue, t.quantity, t.purchaseDate.millis, t.expiresDate?.millis, t.subscriptionGroup ?? row.subscriptionGroup,
                t.offerType?.rawValue, t.appAccountToken?.uuidString.lowercased(), row.orderId, t.source.rawValue, now.millis, signed,
                c.price, c.currency, c.storefront, c.storefrontId, c.offerId, c.offerDiscountType, c.offerPeriod, c.appTransactionId,
                c.transactionReason, c.webOrderLineItemId, c.ownershipType, c.revocationType, c.revocationPercentage, c.refundedSeats,
                t.store.rawValue, t.purchaseToken, t.acknowledgement?.action.rawValue, t.acknowledgement?.deadline.millis,
                c.storeFeePermille,
            ])
        }
        return Set(try await insert.all(on: db).map { try $0.decode(column: "transaction_id", as: String.self) })
    }

    /// A delivered transaction, as refunds and answers need it.
    public struct Delivered: Sendable {
        public var user: UserID
        public var productId: String
        public var productKind: ProductKind
        public var original: String
        public var environment: String
        /// The price Apple signed (milliunits of `currency`), when it did.
        public var price: Int64?
        public var currency: String?
    }

    /// The users holding purchases made from one app install (`appTransactionId`) of `bundleId`, in id order.
    public static func users(ofAppTransaction install: String, bundleId: String, on db: any SQLDatabase) async throws -> [UserID] {
        try await db.raw(
            """
            SELECT DISTINCT user_id FROM store_transactions
            WHERE app_transaction_id = \(bind: install) AND bundle_id = \(bind: bundleId) ORDER BY user_id
            """
        ).all().map { UserID(rawValue: try $0.decode(column: "user_id", as: String.self)) }
    }

    /// The delivered transaction with this id, if any.
    public static func delivered(_ transactionId: String, on db: any SQLDatabase) async throws -> Delivered? {
        guard
            let row = try await db.raw(
                """
                SELECT user_id, product_id, product_kind, original_transaction_id, environment, price, currency FROM store_transactions
                WHERE transaction_id = \(bind: transactionId)
                """
            ).first()
        else { return nil }
        return Delivered(
            user: UserID(rawValue: try row.decode(column: "user_id", as: String.self)),
            productId: try row.decode(column: "product_id", as: String.self),
            productKind: ProductKind(rawValue: try row.decode(column: "product_kind", as: String.self)) ?? .consumable,
            original: try row.decode(column: "original_transaction_id", as: String.self),
            environment: try row.decode(column: "environment", as: String.self),
            price: try row.decode(column: "price", as: Int64?.self),
            currency: try row.decode(column: "currency", as: String?.self)
        )
    }

    /// Who holds each transaction, and the order it completed.
    public static func holders(of ids: [String], on db: any SQLDatabase) async throws -> [String: (user: UserID, orderId: String?)] {
        guard !ids.isEmpty else { return [:] }
        var holders: [String: (user: UserID, orderId: String?)] = [:]
        for row in try await db.select().columns("transaction_id", "user_id", "order_id").from("store_transactions")
            .where("transaction_id", .in, ids).all()
        {
            holders[try row.decode(column: "transaction_id", as: String.self)] = (
                UserID(rawValue: try row.decode(column: "user_id", as: String.self)), try row.decode(column: "order_id", as: String?.self)
            )
        }
        return holders
    }

    /// The (group, original) of every introductory-offer transaction of `users` in `groups`.
    public static func introductoryOffers(
        users: Set<UserID>,
        groups: Set<String>,
        on db: any SQLDatabase
    ) async throws
        -> [UserID: [(group: String, original: String)]]
    {
        guard !users.isEmpty, !groups.isEmpty else { return [:] }
        var found: [UserID: [(group: String, original: String)]] = [:]
        for row in try await db.raw(
            """
            SELECT user_id, subscription_group, original_transaction_id FROM store_transactions
            WHERE offer_type = 1 AND user_id IN (\(binds: users.map(\.rawValue).sorted()))
              AND subscription_group IN (\(binds: groups.sorted()))
            """
        ).all() {
            found[UserID(rawValue: try row.decode(column: "user_id", as: String.self)), default: []].append(
                (try row.decode(column: "subscription_group", as: String.self), try row.decode(column: "original_transaction_id", as: String.self))
            )
        }
        return found
    }

    /// Records how Apple revoked a transaction (type and refunded share), when it says.
    public static func recordRevocation(
        _ transactionId: String,
        type: String?,
        percentage: Int?,
        on db: any SQLDatabase
    ) async throws {
        guard type != nil || percentage != nil else { return }
        try await db.raw(
            """
            UPDATE store_transactions SET revocation_type = COALESCE(\(bind: type), revocation_type),
                revocation_percentage = COALESCE(\(bind: percentage), revocation_percentage)
            WHERE transaction_id = \(bind: transactionId)
            """
        ).run()
    }

    /// Records the install Apple named for every transaction of `original` that had none; returns the transactions
    /// named, with their holders.
    public static func nameInstall(
        _ original: String,
        appTransactionId: String,
        on db: any SQLDatabase
    ) async throws
        -> [(transactionId: String, user: UserID)]
    {
        try await db.raw(
            """
            UPDATE store_transactions SET app_transaction_id = \(bind: appTransactionId)
            WHERE original_transaction_id = \(bind: original) AND app_transaction_id IS NULL
            RETURNING transaction_id, user_id
            """
        ).all().map {
            (try $0.decode(column: "transaction_id", as: String.self), UserID(rawValue: try $0.decode(column: "user_id", as: String.self)))
        }
    }

    /// Records why Apple will never name the install of `original`'s transactions.
    public static func markInstallUnknown(_ original: String, reason: String, on db: any SQLDatabase) async throws {
        try await db.raw(
            """
            UPDATE store_transactions SET app_transaction_error = \(bind: String(reason.prefix(300)))
            WHERE original_transaction_id = \(bind: original) AND app_transaction_id IS NULL
            """
        ).run()
    }

    /// Records Apple's confirmation that `ids` were finished (Finish Transaction).
    public static func markFinished(_ ids: [String], at date: Date, on db: any SQLDatabase) async throws {
        guard !ids.isEmpty else { return }
        try await db.raw(
            "UPDATE store_transactions SET finished_at = \(bind: date.millis) WHERE transaction_id IN (\(binds: ids)) AND finished_at IS NULL"
        ).run()
    }

    /// Records why Apple will never finish `id` (it does not know it, or not as a consumable).
    public static func markUnfinishable(_ id: String, reason: String, on db: any SQLDatabase) async throws {
        try await db.raw(
            """
            UPDATE store_transactions SET finish_error = \(bind: String(reason.prefix(300)))
            WHERE transaction_id = \(bind: id) AND finished_at IS NULL
            """
        ).run()
    }

    /// Records that the store confirmed `id` acknowledged (or consumed); whether this changed anything.
    public static func markAcknowledged(_ id: String, at date: Date, on db: any SQLDatabase) async throws -> Bool {
        try await db.raw(
            """
            UPDATE store_transactions SET acknowledged_at = \(bind: date.millis)
            WHERE transaction_id = \(bind: id) AND acknowledge_action IS NOT NULL AND acknowledged_at IS NULL
            RETURNING transaction_id
            """
        ).first() != nil
    }

    /// Records a failed attempt to acknowledge `id`; with `final`, that the store will never take it (the purchase
    /// was cancelled or voided meanwhile), so it is not asked again.
    public static func markAcknowledgeFailed(_ id: String, error: String, final: Bool, on db: any SQLDatabase) async throws {
        try await db.raw(
            """
            UPDATE store_transactions SET acknowledge_attempts = acknowledge_attempts + 1,
                acknowledge_error = \(bind: final ? String(error.prefix(300)) : nil)
            WHERE transaction_id = \(bind: id) AND acknowledge_action IS NOT NULL AND acknowledged_at IS NULL
            """
        ).run()
    }

    /// Records how many seats of a multiseat purchase Apple has refunded so far (the count only grows); returns the
    /// holder and how many seats this changed, when it did.
    public static func recordSeatRefund(_ transactionId: String, seats: Int, on db: any SQLDatabase) async throws -> (user: UserID, added: Int)? {
        guard
            let row = try await db.raw(
                "SELECT user_id, refunded_seats FROM store_transactions WHERE transaction_id = \(bind: transactionId)"
            ).first()
        else { return nil }
        let before = Int(try row.decode(column: "refunded_seats", as: Int64?.self) ?? 0)
        guard seats > before else { return nil }
        try await db.raw("UPDATE store_transactions SET refunded_seats = \(bind: seats) WHERE transaction_id = \(bind: transactionId)").run()
        return (UserID(rawValue: try row.decode(column: "user_id", as: String.self)), seats - before)
    }

    /// The money and offer columns of a row (selected with ``commerceColumns``).
    public static func commerce(row: any SQLRow) throws -> TransactionCommerce {
        TransactionCommerce(
            price: try row.decode(column: "price", as: Int64?.self),
            currency: try row.decode(column: "currency", as: String?.self),
            storefront: try row.decode(column: "storefront", as: String?.self),
            storefrontId: try row.decode(column: "storefront_id", as: String?.self),
            offerId: try row.decode(column: "offer_id", as: String?.self),
            offerDiscountType: try row.decode(column: "offer_discount_type", as: String?.self),
            offerPeriod: try row.decode(column: "offer_period", as: String?.self),
            appTransactionId: try row.decode(column: "app_transaction_id", as: String?.self),
            transactionReason: try row.decode(column: "transaction_reason", as: String?.self),
            webOrderLineItemId: try row.decode(column: "web_order_line_item_id", as: String?.self),
            ownershipType: try row.decode(column: "ownership_type", as: String?.self),
            revocationType: try row.decode(column: "revocation_type", as: String?.self),
            revocationPercentage: try row.decode(column: "revocation_percentage", as: Int64?.self).map(Int.init),
            refundedSeats: try row.decode(column: "refunded_seats", as: Int64?.self).map(Int.init),
            storeFeePermille: try row.decode(column: "store_fee_permille", as: Int64?.self).map(Int.init)
        )
    }

    /// The columns ``commerce(row:)`` reads.
    public static let commerceColumns =
        "price, currency, storefront, storefront_id, offer_id, offer_discount_type, offer_period, app_transaction_id, "
        + "transaction_reason, web_order_line_item_id, ownership_type, revocation_type, revocation_percentage, refunded_seats, store, "
        + "store_fee_permille"

    /// The row's store (selected with ``commerceColumns``).
    public static func store(row: any SQLRow) throws -> Store {
        Store(rawValue: try row.decode(column: "store", as: String.self)) ?? .appStore
    }
}
