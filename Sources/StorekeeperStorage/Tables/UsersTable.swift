import Foundation
import SQLKit
import StorekeeperCore

/// `users`: a row per user id ever seen (accounts and guests); users appear on first use.
public enum UsersTable {
    /// Creates the rows that are missing; existing users are left as they are.
    public static func ensure(_ users: [UserID], now: Date, on db: any SQLDatabase) async throws {
        guard !users.isEmpty else { return }
        var insert = BulkInsert(into: "users", columns: ["id", "kind", "created_at"], suffix: "ON CONFLICT (id) DO NOTHING")
        for user in Set(users).sorted() {
            insert.values([user.rawValue, user.isGuest ? "guest" : "account", now.millis])
        }
        try await insert.run(on: db)
    }

    /// Records that `guest` was merged into `account`.
    public static func markMerged(_ guest: UserID, into account: UserID, on db: any SQLDatabase) async throws {
        try await db.raw("UPDATE users SET merged_into = \(bind: account.rawValue) WHERE id = \(bind: guest.rawValue)").run()
    }
}
