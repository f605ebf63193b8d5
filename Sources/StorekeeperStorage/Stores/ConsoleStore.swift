import Foundation
import SQLKit
import StorekeeperCore

/// The operator console's own rows: sessions (only the SHA-256 of each cookie token is stored), the log of what
/// operators did, and the look-ups support needs to find a customer.
public struct ConsoleStore: Sendable {
    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// A signed-in operator.
    public struct Session: Sendable, Hashable {
        public var tokenHash: String
        public var operatorName: String
        public var role: String
        /// The token every form of this session carries.
        public var csrf: String
        public var createdAt: Date
        public var expiresAt: Date

        public init(tokenHash: String, operatorName: String, role: String, csrf: String, createdAt: Date, expiresAt: Date) {
            self.tokenHash = tokenHash
            self.operatorName = operatorName
            self.role = role
            self.csrf = csrf
            self.createdAt = createdAt
            self.expiresAt = expiresAt
        }
    }

    /// The session of `tokenHash`, unless it has expired.
    public func session(_ tokenHash: String, now: Date) async throws -> Session? {
        try await provider.withSession { db in
            try await db.raw(
                """
                SELECT token_hash, operator, role, csrf, created_at, expires_at FROM console_sessions
                WHERE token_hash = \(bind: tokenHash) AND expires_at > \(bind: now.millis)
                """
            ).first().map { row in
                Session(
                    tokenHash: try row.decode(column: "token_hash", as: String.self),
                    operatorName: try row.decode(column: "operator", as: String.self),
                    role: try row.decode(column: "role", as: String.self),
                    csrf: try row.decode(column: "csrf", as: String.self),
                    createdAt: Date(millis: try row.decode(column: "created_at", as: Int64.self)),
                    expiresAt: Date(millis: try row.decode(column: "expires_at", as: Int64.self))
                )
            }
        }
    }

    /// One thing an operator did.
    public struct Action: Sendable, Hashable {
        public var id: Int64
        public var operatorName: String
        public var role: String
        public var action: String
        public var subject: String
        public var detail: String?
        public var createdAt: Date
    }

    /// The latest actions, newest first; of one subject when given.
    public func actions(subject: String? = nil, limit: Int = 100) async throws -> [Action] {
        try await provider.withReader { db in
            let filter: SQLQueryString = subject.map { "WHERE subject = \(bind: $0) " } ?? ""
            return try await db.raw(
                "SELECT id, operator, role, action, subject, detail, created_at FROM operator_actions " + filter
                    + "ORDER BY id DESC LIMIT \(bind: limit)"
            ).all().map { row in
                Action(
                    id: try row.decode(column: "id", as: Int64.self),
                    operatorName: try row.decode(column: "operator", as: String.self),
                    role: try row.decode(column: "role", as: String.self),
                    action: try row.decode(column: "action", as: String.self),
                    subject: try row.decode(column: "subject", as: String.self),
                    detail: try row.decode(column: "detail", as: String?.self),
                    createdAt: Date(millis: try row.decode(column: "created_at", as: Int64.self))
                )
            }
        }
    }

    /// A customer a search found, and how.
    public struct Match: Sendable, Hashable {
        public var user: String
        /// `user id`, `transaction id`, `original transaction id`, `order id`, `appAccountToken`.
        public var via: String
        public var detail: String

        public init(user: String, via: String, detail: String) {
            self.user = user
            self.via = via
            self.detail = detail
        }
    }

    /// Customers `query` names: as a user id, a transaction or original transaction id (a Play order id), a Google
    /// Play purchase token, an order id, or an `appAccountToken` (an order's or a transaction's). Each look-up is by
    /// an indexed column.
    public func find(_ query: String) async throws -> [Match] {
        try await provider.withReader { db in
            var matches: [Match] = []
            for row in try await db.raw("SELECT id, kind, merged_into FROM users WHERE id = \(bind: query)").all() {
                let merged = try row.decode(column: "merged_into", as: String?.self)
                let id = try row.decode(column: "id", as: String.self)
                let kind = try row.decode(column: "kind", as: String.self)
                matches.append(Match(user: merged ?? id, via: "user id", detail: merged.map { "merged into \($0)" } ?? kind))
            }
            for row in try await db.raw(
                "SELECT user_id, product_id, transaction_id FROM store_transactions WHERE transaction_id = \(bind: query)"
            ).all() {
                matches.append(
                    Match(
                        user: try row.decode(column: "user_id", as: String.self),
                        via: "transaction id",
                        detail: try row.decode(column: "product_id", as: String.self)
                    )
                )
            }
            for row in try await db.raw(
                """
                SELECT user_id, product_id, COUNT(*) AS n FROM store_transactions WHERE original_transaction_id = \(bind: query)
                GROUP BY user_id, product_id
                """
            ).all() {
                matches.append(
                    Match(
                        user: try row.decode(column: "user_id", as: String.self),
                        via: "original transaction id",
                        detail:
                            "\(try row.decode(column: "product_id", as: String.self)), \(try row.decode(column: "n", as: Int64.self)) transaction(s)"
                    )
                )
            }
            for row in try await db.raw(
                """
                SELECT user_id, product_id, COUNT(*) AS n FROM store_transactions WHERE purchase_token = \(bind: query)
                GROUP BY user_id, product_id
                """
            ).all() {
                matches.append(
                    Match(
                        user: try row.decode(column: "user_id", as: String.self),
                        via: "Google Play purchase token",
                        detail:
                            "\(try row.decode(column: "product_id", as: String.self)), \(try row.decode(column: "n", as: Int64.self)) transaction(s)"
                    )
                )
            }
            let token = UUID(uuidString: query)?.uuidString.lowercased()
            for row in try await db.raw(
                """
                SELECT id, user_id, product_id, status FROM orders WHERE id = \(bind: query)
                    OR app_account_token = \(bind: token ?? query)
                """
            ).all() {
                let id = try row.decode(column: "id", as: String.self)
                matches.append(
                    Match(
                        user: try row.decode(column: "user_id", as: String.self),
                        via: id == query ? "order id" : "appAccountToken",
                        detail:
                            "order \(id): \(try row.decode(column: "product_id", as: String.self)), \(try row.decode(column: "status", as: String.self))"
                    )
                )
            }
            if let token {
                for row in try await db.raw(
                    "SELECT user_id, transaction_id, product_id FROM store_transactions WHERE app_account_token = \(bind: token) LIMIT 20"
                ).all() {
                    matches.append(
                        Match(
                            user: try row.decode(column: "user_id", as: String.self),
                            via: "appAccountToken",
                            detail:
                                "transaction \(try row.decode(column: "transaction_id", as: String.self)): \(try row.decode(column: "product_id", as: String.self))"
                        )
                    )
                }
            }
            var seen = Set<Match>()
            return matches.filter { seen.insert($0).inserted }
        }
    }

    /// One line of a customer's wallet history.
    public struct WalletLine: Sendable, Hashable {
        public var currency: String
        public var amount: Int64
        public var balanceAfter: Int64
        public var cause: String
        public var reason: String?
        public var createdAt: Date
    }

    /// The customer's wallet entries, newest first.
    public func walletEntries(of user: String, limit: Int = 200) async throws -> [WalletLine] {
        try await provider.withReader { db in
            try await db.raw(
                """
                SELECT currency, amount, balance_after, cause, reason, created_at FROM wallet_entries WHERE user_id = \(bind: user)
                ORDER BY created_at DESC LIMIT \(bind: limit)
                """
            ).all().map { row in
                WalletLine(
                    currency: try row.decode(column: "currency", as: String.self),
                    amount: try row.decode(column: "amount", as: Int64.self),
                    balanceAfter: try row.decode(column: "balance_after", as: Int64.self),
                    cause: try row.decode(column: "cause", as: String.self),
                    reason: try row.decode(column: "reason", as: String?.self),
                    createdAt: Date(millis: try row.decode(column: "created_at", as: Int64.self))
                )
            }
        }
    }

    /// One purchase line the customer owns at Apple: where to ask about it again.
    public struct Original: Sendable, Hashable {
        public var originalTransactionId: String
        public var bundleId: String
        public var environment: String
        public var productKind: String
    }

    /// Every original transaction the customer owns, once per app and environment, newest first (bounded: a
    /// customer with thousands of purchase lines is caught up on their latest `limit`).
    public func originals(of user: String, limit: Int = 200) async throws -> [Original] {
        try await provider.withReader { db in
            try await db.raw(
                """
                SELECT original_transaction_id, bundle_id, environment, MIN(product_kind) AS product_kind, MAX(purchase_date) AS latest
                FROM store_transactions WHERE user_id = \(bind: user)
                GROUP BY original_transaction_id, bundle_id, environment ORDER BY latest DESC LIMIT \(bind: limit)
                """
            ).all().map { row in
                Original(
                    originalTransactionId: try row.decode(column: "original_transaction_id", as: String.self),
                    bundleId: try row.decode(column: "bundle_id", as: String.self),
                    environment: try row.decode(column: "environment", as: String.self),
                    productKind: try row.decode(column: "product_kind", as: String.self)
                )
            }
        }
    }
}
