import Foundation
import SQLKit
import StorekeeperCore

/// `transaction_owners`: the user each original transaction (a subscription, an unlock) is bound to.
public enum TransactionOwnersTable {
    /// One binding to make.
    public struct Binding: Sendable {
        public var original: String
        public var user: UserID
        public var bundleId: String
        public var productId: String

        public init(original: String, user: UserID, bundleId: String, productId: String) {
            self.original = original
            self.user = user
            self.bundleId = bundleId
            self.productId = productId
        }
    }

    /// Binds the originals not bound yet; returns the ones bound now (a binding another transaction made first
    /// stays, and is not returned).
    public static func bind(_ bindings: [Binding], now: Date, on db: any SQLDatabase) async throws -> Set<String> {
        guard !bindings.isEmpty else { return [] }
        var insert = BulkInsert(
            into: "transaction_owners",
            columns: ["original_transaction_id", "user_id", "bundle_id", "product_id", "bound_at"],
            suffix: "ON CONFLICT (original_transaction_id) DO NOTHING RETURNING original_transaction_id"
        )
        for binding in bindings.sorted(by: { $0.original < $1.original }) {
            insert.values([binding.original, binding.user.rawValue, binding.bundleId, binding.productId, now.millis])
        }
        return Set(try await insert.all(on: db).map { try $0.decode(column: "original_transaction_id", as: String.self) })
    }

    /// The users the originals are bound to.
    public static func owners(of originals: Set<String>, on db: any SQLDatabase) async throws -> [String: UserID] {
        guard !originals.isEmpty else { return [:] }
        var owners: [String: UserID] = [:]
        for row in try await db.select().columns("original_transaction_id", "user_id").from("transaction_owners")
            .where("original_transaction_id", .in, originals.sorted()).all()
        {
            owners[try row.decode(column: "original_transaction_id", as: String.self)] =
                UserID(rawValue: try row.decode(column: "user_id", as: String.self))
        }
        return owners
    }
}
