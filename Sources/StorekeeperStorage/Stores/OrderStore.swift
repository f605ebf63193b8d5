import Foundation
import SQLKit
import StorekeeperCore

/// Orders: created before StoreKit's purchase, found again by their `appAccountToken`.
public struct OrderStore: Sendable {
    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    public func create(_ order: Order) async throws {
        try await provider.withTransaction { db in
            try await UserStore.ensure(order.user, now: order.createdAt, on: db)
            try await db.raw(
                """
                INSERT INTO orders (id, user_id, bundle_id, product_id, app_account_token, status, created_at, expires_at, updated_at)
                VALUES (\(bind: order.id), \(bind: order.user.rawValue), \(bind: order.bundleId), \(bind: order.productId),
                    \(bind: order.appAccountToken.uuidString.lowercased()), \(bind: order.status.rawValue),
                    \(bind: order.createdAt.millis), \(bind: order.expiresAt.millis), \(bind: order.createdAt.millis))
                """
            ).run()
            try await AuditStore.append(
                AuditEntry(
                    action: "order.created", user: order.user, subject: order.id, cause: "order:\(order.id)",
                    detail: order.productId, createdAt: order.createdAt), on: db)
        }
    }

    public func find(_ id: String) async throws -> Order? {
        try await provider.withSession { db in
            try await db.raw("SELECT * FROM orders WHERE id = \(bind: id)").first().map(Self.order(from:))
        }
    }

    /// Cancels a created order. A delivered order stays delivered; a cancelled one can still be delivered later.
    public func cancel(_ id: String, user: UserID, now: Date = Date()) async throws -> Order? {
        try await provider.withTransaction { db in
            let updated = try await db.raw(
                """
                UPDATE orders SET status = 'cancelled', updated_at = \(bind: now.millis)
                WHERE id = \(bind: id) AND user_id = \(bind: user.rawValue) AND status = 'created'
                RETURNING id
                """
            ).first()
            if updated != nil {
                try await AuditStore.append(
                    AuditEntry(action: "order.cancelled", user: user, subject: id, cause: "order:\(id)", createdAt: now), on: db)
            }
            return try await db.raw("SELECT * FROM orders WHERE id = \(bind: id) AND user_id = \(bind: user.rawValue)")
                .first().map(Self.order(from:))
        }
    }

    public func orders(of user: UserID, limit: Int = 100) async throws -> [Order] {
        try await provider.withSession { db in
            try await db.raw(
                "SELECT * FROM orders WHERE user_id = \(bind: user.rawValue) ORDER BY created_at DESC, id LIMIT \(bind: limit)"
            ).all().map(Self.order(from:))
        }
    }

    static func order(from row: any SQLRow) throws -> Order {
        Order(
            id: try row.decode(column: "id", as: String.self),
            user: UserID(rawValue: try row.decode(column: "user_id", as: String.self)),
            bundleId: try row.decode(column: "bundle_id", as: String.self),
            productId: try row.decode(column: "product_id", as: String.self),
            appAccountToken: UUID(uuidString: try row.decode(column: "app_account_token", as: String.self)) ?? UUID(),
            status: OrderStatus(rawValue: try row.decode(column: "status", as: String.self)) ?? .created,
            createdAt: Date(millis: try row.decode(column: "created_at", as: Int64.self)),
            expiresAt: Date(millis: try row.decode(column: "expires_at", as: Int64.self)),
            transactionId: try row.decode(column: "transaction_id", as: String?.self))
    }
}
