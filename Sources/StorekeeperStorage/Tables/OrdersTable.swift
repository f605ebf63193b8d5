import Foundation
import SQLKit
import StorekeeperCore

/// `orders`: what a user set out to buy, found again by its `appAccountToken`.
public enum OrdersTable {
    public static func insert(_ order: Order, on db: any SQLDatabase) async throws {
        var insert = BulkInsert(
            into: "orders",
            columns: [
                "id", "user_id", "bundle_id", "product_id", "app_account_token", "status", "created_at", "expires_at", "updated_at",
            ]
        )
        insert.values([
            order.id, order.user.rawValue, order.bundleId, order.productId, order.appAccountToken.uuidString.lowercased(),
            order.status.rawValue, order.createdAt.millis, order.expiresAt.millis, order.createdAt.millis,
        ])
        try await insert.run(on: db)
    }

    /// Orders by id or by token, with whether a transaction completed them already.
    public static func find(
        ids: Set<String>,
        tokens: Set<String>,
        on db: any SQLDatabase
    ) async throws
        -> [(order: OrderReference, completed: Bool)]
    {
        guard !ids.isEmpty || !tokens.isEmpty else { return [] }
        let query = db.select().columns("id", "user_id", "app_account_token", "bundle_id", "product_id", "transaction_id").from("orders")
        if !ids.isEmpty { query.orWhere("id", .in, Array(ids)) }
        if !tokens.isEmpty { query.orWhere("app_account_token", .in, Array(tokens)) }
        return try await query.all().map { row in
            (
                OrderReference(
                    id: try row.decode(column: "id", as: String.self),
                    user: UserID(rawValue: try row.decode(column: "user_id", as: String.self)),
                    bundleId: try row.decode(column: "bundle_id", as: String.self),
                    productId: try row.decode(column: "product_id", as: String.self),
                    appAccountToken: try row.decode(column: "app_account_token", as: String.self)
                ),
                try row.decode(column: "transaction_id", as: String?.self) != nil
            )
        }
    }

    /// Marks an order delivered by `transactionId` unless a transaction completed it first; whether it did.
    public static func complete(_ orderId: String, transactionId: String, now: Date, on db: any SQLDatabase) async throws -> Bool {
        try await db.raw(
            """
            UPDATE orders SET status = 'delivered', transaction_id = \(bind: transactionId), updated_at = \(bind: now.millis)
            WHERE id = \(bind: orderId) AND transaction_id IS NULL RETURNING id
            """
        ).first() != nil
    }

    /// Cancels a created order of `user`; whether it changed.
    public static func cancel(_ id: String, user: UserID, now: Date, on db: any SQLDatabase) async throws -> Bool {
        try await db.raw(
            """
            UPDATE orders SET status = 'cancelled', updated_at = \(bind: now.millis)
            WHERE id = \(bind: id) AND user_id = \(bind: user.rawValue) AND status = 'created'
            RETURNING id
            """
        ).first() != nil
    }
}
