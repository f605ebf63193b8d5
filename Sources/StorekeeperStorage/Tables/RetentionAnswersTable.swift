import Foundation
import SQLKit
import StorekeeperCore

/// `retention_answers`: what Storekeeper answered Apple's Retention Messaging requests, per subscription — the rule,
/// the kind of answer and the offer it carried — so a retention offer redeemed later is attributed to the answer that
/// offered it.
public enum RetentionAnswersTable {
    /// Records one answer (the same rule answering the same subscription in the same millisecond counts once).
    public static func insert(
        originalTransactionId: String,
        ruleId: String,
        kind: String,
        offerId: String?,
        at: Date,
        on db: any SQLDatabase
    ) async throws {
        var insert = BulkInsert(
            into: "retention_answers",
            columns: ["original_transaction_id", "answered_at", "rule_id", "kind", "offer_id"],
            suffix: "ON CONFLICT (original_transaction_id, answered_at, rule_id) DO NOTHING"
        )
        insert.values([originalTransactionId, at.millis, ruleId, kind, offerId])
        try await insert.run(on: db)
    }
}
