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
}
