import Foundation
import SQLKit
import StorekeeperCore

/// `guest_credentials`: the SHA-256 of each guest's secret (never the secret).
public enum GuestCredentialsTable {
    /// Stores a credential unless the guest has one; whether it was stored.
    public static func insert(guestId: String, digest: String, origin: String, now: Date, on db: any SQLDatabase) async throws -> Bool {
        var insert = BulkInsert(
            into: "guest_credentials",
            columns: ["guest_id", "digest", "origin", "created_at"],
            suffix: "ON CONFLICT (guest_id) DO NOTHING RETURNING guest_id"
        )
        insert.values([guestId, digest, origin, now.millis])
        return !(try await insert.all(on: db)).isEmpty
    }

    /// The stored digest of a guest's secret.
    public static func digest(guestId: String, on db: any SQLDatabase) async throws -> String? {
        try await db.raw("SELECT digest FROM guest_credentials WHERE guest_id = \(bind: guestId)").first()?
            .decode(column: "digest", as: String.self)
    }

    /// Issued guests created before `cutoff` that nothing happened to: no order, no purchase, no grant, no wallet, no
    /// event, no audit entry, not merged (at most `limit`, oldest first).
    public static func idle(
        createdBefore cutoff: Date,
        among guestIds: [String]? = nil,
        limit: Int,
        on db: any SQLDatabase
    ) async throws -> [String] {
        let among: SQLQueryString = guestIds.map { "AND g.guest_id IN (\(SQLList($0.map { SQLBind($0) })))" } ?? ""
        return try await db.raw(
            """
            SELECT g.guest_id FROM guest_credentials g JOIN users u ON u.id = \(bind: UserID.guestPrefix) || g.guest_id
            WHERE g.origin = 'issued' AND g.created_at < \(bind: cutoff.millis) AND u.merged_into IS NULL \(among)
            AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.user_id = u.id)
            AND NOT EXISTS (SELECT 1 FROM transaction_owners t WHERE t.user_id = u.id)
            AND NOT EXISTS (SELECT 1 FROM store_transactions a WHERE a.user_id = u.id)
            AND NOT EXISTS (SELECT 1 FROM entitlement_grants e WHERE e.user_id = u.id)
            AND NOT EXISTS (SELECT 1 FROM wallets w WHERE w.user_id = u.id)
            AND NOT EXISTS (SELECT 1 FROM events v WHERE v.user_id = u.id)
            AND NOT EXISTS (SELECT 1 FROM audit_entries d WHERE d.user_id = u.id)
            AND NOT EXISTS (SELECT 1 FROM users m WHERE m.merged_into = u.id)
            ORDER BY g.created_at LIMIT \(bind: limit)
            """
        ).all().map { try $0.decode(column: "guest_id", as: String.self) }
    }

    /// Deletes the guests (credential and user row) among `guestIds` that are still idle as of `cutoff`; returns
    /// the guests that went. Checked again here, in the writing transaction: a guest who started buying meanwhile
    /// stays.
    public static func expire(_ guestIds: [String], createdBefore cutoff: Date, on db: any SQLDatabase) async throws -> [UserID] {
        guard !guestIds.isEmpty else { return [] }
        let still = try await idle(createdBefore: cutoff, among: guestIds, limit: guestIds.count, on: db).sorted()
        guard !still.isEmpty else { return [] }
        let ids = SQLList(still.map { SQLBind($0) })
        let users = SQLList(still.map { SQLBind(UserID.guestPrefix + $0) })
        try await db.raw("DELETE FROM guest_credentials WHERE guest_id IN (\(ids))").run()
        try await db.raw("DELETE FROM users WHERE id IN (\(users))").run()
        return still.compactMap { UserID.guest(id: $0) }
    }
}
