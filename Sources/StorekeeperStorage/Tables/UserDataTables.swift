import Foundation
import SQLKit
import StorekeeperCore

/// The rows that belong to a user, across every user-keyed table: moved together when a guest is merged into an
/// account or a subscription is transferred. History (audit entries, wallet entries) stays true of who it was.
public enum UserDataTables {
    /// What to move.
    public enum Scope: Sendable, Hashable {
        /// Everything the user owns (a guest merged into an account).
        case everything
        /// One original transaction (a subscription or unlock) and what hangs off it. Consumables stay: their coins
        /// may already be spent.
        case original(String)
    }

    /// The live grants of `user` in `scope`, before a move (for the audit on both sides).
    public static func liveGrants(of user: UserID, scope: Scope, on db: any SQLDatabase) async throws -> [EntitlementGrantsTable.Changed] {
        let filter: SQLQueryString =
            switch scope {
            case .everything: ""
            case .original(let original): " AND original_transaction_id = \(bind: original)"
            }
        return try await db.raw(
            """
            SELECT transaction_id, user_id, entitlement, starts_at, ends_at FROM entitlement_grants
            WHERE user_id = \(bind: user.rawValue) AND revoked_at IS NULL
            """ + filter
        ).all().map { try EntitlementGrantsTable.changed($0) }
    }

    /// How many transactions and orders `user` has in `scope`.
    public static func counts(of user: UserID, on db: any SQLDatabase) async throws -> (transactions: Int, orders: Int) {
        let transactions =
            try await db.raw(
                "SELECT COUNT(*) AS n FROM store_transactions WHERE user_id = \(bind: user.rawValue)"
            ).first()?.decode(column: "n", as: Int64.self) ?? 0
        let orders =
            try await db.raw("SELECT COUNT(*) AS n FROM orders WHERE user_id = \(bind: user.rawValue)").first()?
            .decode(column: "n", as: Int64.self) ?? 0
        return (Int(transactions), Int(orders))
    }

    /// Moves the rows of `scope` from `from` to `to`.
    public static func move(from: UserID, to: UserID, scope: Scope, on db: any SQLDatabase) async throws {
        switch scope {
        case .everything:
            for table in [
                "store_transactions", "transaction_owners", "entitlement_grants", "orders", "subscriptions", "revocations",
                "consumption_requests", "offer_nonces",
            ] {
                try await db.raw(
                    "UPDATE \(unsafeRaw: table) SET user_id = \(bind: to.rawValue) WHERE user_id = \(bind: from.rawValue)"
                ).run()
            }
            // A team's purchaser and its members follow the user too.
            for column in ["purchaser_id", "member_id"] {
                try await db.raw(
                    "UPDATE team_seats SET \(unsafeRaw: column) = \(bind: to.rawValue) WHERE \(unsafeRaw: column) = \(bind: from.rawValue)"
                ).run()
            }
            // The purchases Storekeeper named a user for at Apple now name the new one: their tokens are set again.
            try await db.raw(
                """
                UPDATE account_tokens SET user_id = \(bind: to.rawValue), set_at = NULL, set_token = NULL, error = NULL
                WHERE user_id = \(bind: from.rawValue)
                """
            ).run()
        case .original(let original):
            try await db.raw(
                """
                UPDATE entitlement_grants SET user_id = \(bind: to.rawValue)
                WHERE original_transaction_id = \(bind: original) AND user_id = \(bind: from.rawValue)
                """
            ).run()
            try await db.raw(
                """
                UPDATE store_transactions SET user_id = \(bind: to.rawValue)
                WHERE original_transaction_id = \(bind: original) AND user_id = \(bind: from.rawValue) AND product_kind <> 'consumable'
                """
            ).run()
            for table in ["transaction_owners", "subscriptions"] {
                try await db.raw(
                    "UPDATE \(unsafeRaw: table) SET user_id = \(bind: to.rawValue) WHERE original_transaction_id = \(bind: original)"
                ).run()
            }
            try await db.raw(
                """
                UPDATE account_tokens SET user_id = \(bind: to.rawValue), set_at = NULL, set_token = NULL, error = NULL
                WHERE original_transaction_id = \(bind: original) AND user_id <> \(bind: to.rawValue)
                """
            ).run()
            // The team moves with its subscription (its members keep their seats).
            try await db.raw(
                "UPDATE team_seats SET purchaser_id = \(bind: to.rawValue) WHERE original_transaction_id = \(bind: original)"
            ).run()
            for table in ["revocations", "consumption_requests"] {
                try await db.raw(
                    """
                    UPDATE \(unsafeRaw: table) SET user_id = \(bind: to.rawValue)
                    WHERE original_transaction_id = \(bind: original) AND user_id = \(bind: from.rawValue)
                    """
                ).run()
            }
        }
    }
}
