import Foundation
import SQLKit
import StorekeeperCore

/// `account_tokens`: purchases that reached a user without an `appAccountToken` of their own (offer codes, promoted
/// purchases, purchases made outside the app, restores), whose user's token is to be set at Apple; and
/// `users.app_account_token`, each user's token.
public enum AccountTokensTable {
    /// A purchase whose original transaction is to carry its user's token.
    public struct Request: Sendable, Hashable {
        public var originalTransactionId: String
        public var user: UserID
        public var bundleId: String
        public var environment: String

        public init(originalTransactionId: String, user: UserID, bundleId: String, environment: String) {
            self.originalTransactionId = originalTransactionId
            self.user = user
            self.bundleId = bundleId
            self.environment = environment
        }
    }

    /// A request still to send to Apple, with the user's token when the user has one already.
    public struct Due: Sendable, Hashable {
        public var request: Request
        /// Lowercased.
        public var token: String?
    }

    /// Records requests; an original transaction asked for before keeps its first request.
    public static func request(_ requests: [Request], now: Date, on db: any SQLDatabase) async throws {
        guard !requests.isEmpty else { return }
        var insert = BulkInsert(
            into: "account_tokens",
            columns: ["original_transaction_id", "user_id", "bundle_id", "environment", "created_at"],
            suffix: "ON CONFLICT (original_transaction_id) DO NOTHING"
        )
        for request in requests {
            insert.values([request.originalTransactionId, request.user.rawValue, request.bundleId, request.environment, now.millis])
        }
        try await insert.run(on: db)
    }

    /// Requests of `bundleIds` not yet confirmed nor refused, oldest first.
    public static func due(bundleIds: [String], limit: Int, on db: any SQLDatabase) async throws -> [Due] {
        guard !bundleIds.isEmpty else { return [] }
        return try await db.raw(
            """
            SELECT a.original_transaction_id, a.user_id, a.bundle_id, a.environment, u.app_account_token
            FROM account_tokens a LEFT JOIN users u ON u.id = a.user_id
            WHERE a.set_at IS NULL AND a.error IS NULL AND a.bundle_id IN (\(binds: bundleIds))
            ORDER BY a.created_at, a.original_transaction_id LIMIT \(bind: limit)
            """
        ).all().map { row in
            Due(
                request: Request(
                    originalTransactionId: try row.decode(column: "original_transaction_id", as: String.self),
                    user: UserID(rawValue: try row.decode(column: "user_id", as: String.self)),
                    bundleId: try row.decode(column: "bundle_id", as: String.self),
                    environment: try row.decode(column: "environment", as: String.self)
                ),
                token: try row.decode(column: "app_account_token", as: String?.self)
            )
        }
    }

    /// Gives each of `users` that has none a fresh random token; returns every one's token (lowercased).
    public static func ensureUserTokens(_ users: Set<UserID>, on db: any SQLDatabase) async throws -> [UserID: String] {
        guard !users.isEmpty else { return [:] }
        for user in users.sorted() {
            try await db.raw(
                """
                UPDATE users SET app_account_token = \(bind: UUID().uuidString.lowercased())
                WHERE id = \(bind: user.rawValue) AND app_account_token IS NULL
                """
            ).run()
        }
        return try await userTokens(users, on: db)
    }

    /// The tokens `users` have.
    public static func userTokens(_ users: Set<UserID>, on db: any SQLDatabase) async throws -> [UserID: String] {
        guard !users.isEmpty else { return [:] }
        var tokens: [UserID: String] = [:]
        for row in try await db.raw(
            "SELECT id, app_account_token FROM users WHERE id IN (\(binds: users.map(\.rawValue))) AND app_account_token IS NOT NULL"
        ).all() {
            tokens[UserID(rawValue: try row.decode(column: "id", as: String.self))] = try row.decode(column: "app_account_token", as: String.self)
        }
        return tokens
    }

    /// Records Apple's confirmation, unless the purchase moved to another user meanwhile; whether it did.
    public static func markSet(_ original: String, user: UserID, token: String, now: Date, on db: any SQLDatabase) async throws -> Bool {
        try await db.raw(
            """
            UPDATE account_tokens SET set_at = \(bind: now.millis), set_token = \(bind: token)
            WHERE original_transaction_id = \(bind: original) AND user_id = \(bind: user.rawValue) AND set_at IS NULL
            RETURNING original_transaction_id
            """
        ).first() != nil
    }

    /// Records why Apple will never take the token for `original`.
    public static func markRefused(_ original: String, reason: String, on db: any SQLDatabase) async throws {
        try await db.raw(
            """
            UPDATE account_tokens SET error = \(bind: String(reason.prefix(300)))
            WHERE original_transaction_id = \(bind: original) AND set_at IS NULL
            """
        ).run()
    }

    /// What Apple confirmed for `original`: the token and when.
    public static func confirmed(_ original: String, on db: any SQLDatabase) async throws -> (token: String, at: Date)? {
        guard
            let row = try await db.raw(
                "SELECT set_token, set_at FROM account_tokens WHERE original_transaction_id = \(bind: original) AND set_at IS NOT NULL"
            ).first()
        else { return nil }
        return (try row.decode(column: "set_token", as: String.self), Date(millis: try row.decode(column: "set_at", as: Int64.self)))
    }
}
