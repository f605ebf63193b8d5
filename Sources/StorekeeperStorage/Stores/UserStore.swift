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

    /// Moves everything a guest owns to `account`, audited on both sides: its transactions and their bindings,
    /// entitlements, orders, subscriptions, refunds and Apple's refund questions (so a refund or reversal that
    /// arrives later lands on the account), offer nonces, and coins. Running it again moves nothing.
    public func mergeGuest(_ guest: UserID, into account: UserID, now: Date = Date()) async throws -> MergeSummary {
        guard guest.isGuest, !account.isGuest else {
            throw StorekeeperError(.forbidden, code: "account_required", message: "a guest merges into a signed-in account")
        }
        return try await provider.withTransaction { db in
            try await Self.ensure(account, now: now, on: db)
            let moved = try await db.raw(
                "SELECT transaction_id FROM apple_transactions WHERE user_id = \(bind: guest.rawValue)"
            ).all().count
            let grants = try await db.raw(
                """
                SELECT transaction_id, entitlement, starts_at, ends_at FROM entitlement_grants
                WHERE user_id = \(bind: guest.rawValue) AND revoked_at IS NULL
                """
            ).all()
            let orders = try await db.raw("SELECT id FROM orders WHERE user_id = \(bind: guest.rawValue)").all().count
            // Every table keyed by user, except the append-only history (audit, wallet entries) that stays true of the guest.
            for table in Self.userKeyedTables {
                try await db.raw(
                    "UPDATE \(unsafeRaw: table) SET user_id = \(bind: account.rawValue) WHERE user_id = \(bind: guest.rawValue)"
                ).run()
            }
            let cause = "merge:\(guest.rawValue)"
            for grant in grants {
                let entitlement = try grant.decode(column: "entitlement", as: String.self)
                let start = Date(millis: try grant.decode(column: "starts_at", as: Int64.self))
                let end = try grant.decode(column: "ends_at", as: Int64?.self).map(Date.init(millis:))
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
            var coins: Int64 = 0
            let wallets = try await db.raw(
                "SELECT currency, balance FROM wallets WHERE user_id = \(bind: guest.rawValue) AND balance <> 0 ORDER BY currency"
            ).all()
            for wallet in wallets {
                let currency = try wallet.decode(column: "currency", as: String.self)
                let balance = try wallet.decode(column: "balance", as: Int64.self)
                guard balance.magnitude <= WalletLimits.maximumBalance.magnitude else {
                    throw WalletLimits.limitReached("the guest's \(currency) balance \(balance) cannot be moved")
                }
                _ = try await WalletStore.apply(
                    user: guest, currency: currency, amount: -balance,
                    cause: WalletCause.merge(guest: guest, into: account, at: now, side: "out"), reason: "merged into account",
                    allowNegative: true, now: now, on: db)
                _ = try await WalletStore.apply(
                    user: account, currency: currency, amount: balance,
                    cause: WalletCause.merge(guest: guest, into: account, at: now, side: "in"), reason: "merged from guest",
                    allowNegative: true, now: now, on: db)
                if currency == "coins" { coins = balance }
            }
            try await db.raw(
                "UPDATE users SET merged_into = \(bind: account.rawValue) WHERE id = \(bind: guest.rawValue)"
            ).run()
            if moved + grants.count + orders > 0 || coins != 0 {
                try await AuditStore.append(
                    AuditEntry(
                        action: "user.merged", user: account, subject: guest.rawValue, amount: coins, cause: cause,
                        detail: "\(moved) transactions, \(orders) orders", createdAt: now), on: db)
            }
            return MergeSummary(transactions: moved, entitlements: grants.count, orders: orders, coins: coins)
        }
    }

    /// The tables whose rows belong to one user and move with them (merge); history tables are not among them.
    static let userKeyedTables = [
        "apple_transactions", "transaction_owners", "entitlement_grants", "orders", "subscriptions", "revocations",
        "consumption_requests", "offer_nonces",
    ]
}
