import Foundation
import SQLKit
import StorekeeperCore

/// Users and the guest → account merge.
public struct UserStore: Sendable {
    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// Creates the user row if missing (users appear on first use; nothing else is known about them).
    static func ensure(_ user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await db.raw(
            """
            INSERT INTO users (id, kind, created_at) VALUES (\(bind: user.rawValue), \(bind: user.isGuest ? "guest" : "account"), \(bind: now.millis))
            ON CONFLICT (id) DO NOTHING
            """
        ).run()
    }

    /// What a merge moved.
    public struct MergeSummary: Sendable, Hashable {
        public var transactions: Int
        public var entitlements: Int
        public var orders: Int
        public var coins: Int64
    }

    /// Moves everything a guest owns (transactions, entitlements, orders, coins) to `account`, audited on both
    /// sides. Running it again moves nothing.
    public func mergeGuest(_ guest: UserID, into account: UserID, now: Date = Date()) async throws -> MergeSummary {
        precondition(guest.isGuest && !account.isGuest)
        return try await provider.withTransaction { db in
            try await Self.ensure(account, now: now, on: db)
            let moved = try await db.raw(
                "SELECT transaction_id FROM apple_transactions WHERE user_id = \(bind: guest.rawValue)"
            ).all().count
            try await db.raw(
                "UPDATE apple_transactions SET user_id = \(bind: account.rawValue) WHERE user_id = \(bind: guest.rawValue)"
            ).run()
            try await db.raw(
                "UPDATE transaction_owners SET user_id = \(bind: account.rawValue) WHERE user_id = \(bind: guest.rawValue)"
            ).run()
            let grants = try await db.raw(
                """
                SELECT transaction_id, entitlement, starts_at, ends_at FROM entitlement_grants
                WHERE user_id = \(bind: guest.rawValue) AND revoked_at IS NULL
                """
            ).all()
            try await db.raw(
                "UPDATE entitlement_grants SET user_id = \(bind: account.rawValue) WHERE user_id = \(bind: guest.rawValue)"
            ).run()
            for grant in grants {
                let entitlement = try grant.decode(column: "entitlement", as: String.self)
                let start = Date(millis: try grant.decode(column: "starts_at", as: Int64.self))
                let end = try grant.decode(column: "ends_at", as: Int64?.self).map(Date.init(millis:))
                let cause = "merge:\(guest.rawValue)"
                let transaction = try grant.decode(column: "transaction_id", as: String.self)
                try await AuditStore.append(
                    AuditEntry(
                        action: "entitlement.transferred_out", user: guest, subject: entitlement, periodStart: start,
                        periodEnd: end, cause: cause, detail: "transaction \(transaction) to \(account.rawValue)",
                        createdAt: now), on: db)
                try await AuditStore.append(
                    AuditEntry(
                        action: "entitlement.transferred_in", user: account, subject: entitlement, periodStart: start,
                        periodEnd: end, cause: cause, detail: "transaction \(transaction) from guest", createdAt: now),
                    on: db)
            }
            let orders = try await db.raw("SELECT id FROM orders WHERE user_id = \(bind: guest.rawValue)").all().count
            try await db.raw(
                "UPDATE orders SET user_id = \(bind: account.rawValue) WHERE user_id = \(bind: guest.rawValue)"
            ).run()
            var coins: Int64 = 0
            let wallets = try await db.raw(
                "SELECT currency, balance FROM wallets WHERE user_id = \(bind: guest.rawValue) AND balance <> 0"
            ).all()
            for wallet in wallets {
                let currency = try wallet.decode(column: "currency", as: String.self)
                let balance = try wallet.decode(column: "balance", as: Int64.self)
                let cause = "merge:\(guest.rawValue):\(account.rawValue):\(now.millis)"
                _ = try await WalletStore.apply(
                    user: guest, currency: currency, amount: -balance, cause: cause + ":out", reason: "merged into account",
                    allowNegative: true, now: now, on: db)
                _ = try await WalletStore.apply(
                    user: account, currency: currency, amount: balance, cause: cause + ":in", reason: "merged from guest",
                    allowNegative: true, now: now, on: db)
                coins += balance
            }
            try await db.raw(
                "UPDATE users SET merged_into = \(bind: account.rawValue) WHERE id = \(bind: guest.rawValue)"
            ).run()
            if moved + grants.count + orders > 0 || coins != 0 {
                try await AuditStore.append(
                    AuditEntry(
                        action: "user.merged", user: account, subject: guest.rawValue, amount: coins, cause: "merge:\(guest.rawValue)",
                        detail: "\(moved) transactions, \(orders) orders", createdAt: now), on: db)
            }
            return MergeSummary(transactions: moved, entitlements: grants.count, orders: orders, coins: coins)
        }
    }
}
