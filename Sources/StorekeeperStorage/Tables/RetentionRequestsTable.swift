import Foundation
import SQLKit
import StorekeeperCore

/// `retention_requests`: the Retention Messaging requests already answered, so a captured request replayed within
/// its freshness window gets no second answer (a freshly signed offer each time).
public enum RetentionRequestsTable {
    /// Records a request id; whether it was new. Requests signed before `forgetBefore` are forgotten on the way (one
    /// signed that long ago is refused as stale before it gets here).
    public static func claim(_ requestId: String, signedAt: Date, forgetBefore: Date, now: Date, on db: any SQLDatabase) async throws -> Bool {
        try await db.raw("DELETE FROM retention_requests WHERE signed_at < \(bind: forgetBefore.millis)").run()
        var insert = BulkInsert(
            into: "retention_requests",
            columns: ["request_id", "signed_at", "seen_at"],
            suffix: "ON CONFLICT (request_id) DO NOTHING RETURNING request_id"
        )
        insert.values([requestId, signedAt.millis, now.millis])
        return !(try await insert.all(on: db)).isEmpty
    }
}
