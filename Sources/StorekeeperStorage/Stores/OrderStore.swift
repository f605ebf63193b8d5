import Foundation
import SQLKit
import StorekeeperCore

/// Reads orders (created before StoreKit's purchase, found again by their `appAccountToken`); the ledger writes them.
public struct OrderStore: Sendable {
    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    public func find(_ id: String) async throws -> Order? {
        try await provider.withSession { db in
            try await db.raw("SELECT * FROM orders WHERE id = \(bind: id)").first().map(Self.order(from:))
        }
    }

    /// The order `id` if it is `user`'s.
    public func find(_ id: String, of user: UserID) async throws -> Order? {
        try await provider.withSession { db in
            try await db.raw("SELECT * FROM orders WHERE id = \(bind: id) AND user_id = \(bind: user.rawValue)").first().map(Self.order(from:))
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
            transactionId: try row.decode(column: "transaction_id", as: String?.self)
        )
    }
}
