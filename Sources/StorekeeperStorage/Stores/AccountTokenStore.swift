import Foundation
import SQLKit
import StorekeeperCore

/// Reads the purchases whose user's app account token is still to be set at Apple, and what Apple confirmed.
public struct AccountTokenStore: Sendable {
    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// Requests of `bundleIds` still to send, oldest first.
    public func due(bundleIds: [String], limit: Int) async throws -> [AccountTokensTable.Due] {
        try await provider.withSession { db in try await AccountTokensTable.due(bundleIds: bundleIds, limit: limit, on: db) }
    }

    /// The token Apple confirmed on `originalTransactionId`, and when.
    public func confirmed(_ originalTransactionId: String) async throws -> (token: String, at: Date)? {
        try await provider.withSession { db in try await AccountTokensTable.confirmed(originalTransactionId, on: db) }
    }

    /// `user`'s own token, if one was made.
    public func token(of user: UserID) async throws -> String? {
        try await provider.withSession { db in try await AccountTokensTable.userTokens([user], on: db)[user] }
    }
}
