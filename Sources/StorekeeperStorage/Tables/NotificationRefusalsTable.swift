import Foundation
import SQLKit
import StorekeeperCore

/// `notification_refusals`: refused webhook bodies counted per source, reason and format (see
/// `NotificationRefusalStore`).
public enum NotificationRefusalsTable {
    /// Adds `count` refusals (first and last seen as given) to their row, or starts the row; the latest body's
    /// digest and prefix replace the row's.
    public static func count(
        source: String,
        reason: String,
        format: String,
        count: Int64 = 1,
        digest: String,
        prefix: String,
        firstSeen: Date,
        lastSeen: Date,
        on db: any SQLDatabase
    ) async throws {
        var insert = BulkInsert(
            into: "notification_refusals",
            columns: ["source", "reason", "format", "count", "digest", "prefix", "first_seen", "last_seen"],
            suffix: """
                ON CONFLICT (source, reason, format) DO UPDATE SET count = notification_refusals.count + excluded.count,
                    digest = excluded.digest, prefix = excluded.prefix, last_seen = excluded.last_seen
                """
        )
        insert.values([source, reason, format, count, digest, prefix, firstSeen.millis, lastSeen.millis])
        try await insert.run(on: db)
    }

    /// Whether a row for this source, reason and format exists.
    public static func exists(source: String, reason: String, format: String, on db: any SQLDatabase) async throws -> Bool {
        try await db.raw(
            "SELECT 1 AS one FROM notification_refusals WHERE source = \(bind: source) AND reason = \(bind: reason) AND format = \(bind: format)"
        ).first() != nil
    }

    /// How many rows there are.
    public static func rowCount(on db: any SQLDatabase) async throws -> Int {
        Int(try await db.raw("SELECT COUNT(*) AS n FROM notification_refusals").first()?.decode(column: "n", as: Int64.self) ?? 0)
    }
}
