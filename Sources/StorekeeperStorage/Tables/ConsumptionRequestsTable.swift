import Foundation
import SQLKit
import StorekeeperCore

/// `consumption_requests`: Apple's refund questions, queued for an answer within 12 hours (a ``LeasedQueue``).
public enum ConsumptionRequestsTable {
    /// Queues a question once per notification; whether it was new.
    public static func insert(
        id: String,
        bundleId: String,
        environment: String,
        transactionId: String,
        originalTransactionId: String?,
        user: UserID?,
        reason: String?,
        requestedAt: Date,
        now: Date,
        on db: any SQLDatabase
    ) async throws -> Bool {
        var insert = BulkInsert(
            into: "consumption_requests",
            columns: [
                "id", "bundle_id", "environment", "transaction_id", "original_transaction_id", "user_id", "reason", "requested_at",
                "deadline_at", "status", "attempts", "next_attempt_at", "updated_at",
            ],
            suffix: "ON CONFLICT (id) DO NOTHING RETURNING id"
        )
        insert.values([
            id, bundleId, environment, transactionId, originalTransactionId, user?.rawValue, reason, requestedAt.millis,
            requestedAt.addingTimeInterval(12 * 3600).millis, "pending", 0, requestedAt.millis, now.millis,
        ])
        return !(try await insert.all(on: db)).isEmpty
    }

    /// Closes the open questions about a transaction Apple decided on.
    public static func close(transactionId: String, decision: String, now: Date, on db: any SQLDatabase) async throws {
        try await db.raw(
            """
            UPDATE consumption_requests SET status = 'closed', last_error = \(bind: "the store decided first: \(decision)"),
                updated_at = \(bind: now.millis)
            WHERE transaction_id = \(bind: transactionId) AND status = 'pending'
            """
        ).run()
    }

    /// Records the answer Apple accepted; the user and transaction when the question was still open.
    public static func markAnswered(
        _ id: String,
        answer: String,
        now: Date,
        on db: any SQLDatabase
    ) async throws
        -> (user: UserID?, transactionId: String, requestedAt: Date, deadline: Date)?
    {
        guard
            let row = try await db.raw(
                """
                UPDATE consumption_requests SET status = 'answered', answer = \(bind: answer), answered_at = \(bind: now.millis),
                    claimed_until = NULL, last_error = NULL, updated_at = \(bind: now.millis)
                WHERE id = \(bind: id) AND status = 'pending' RETURNING user_id, transaction_id, requested_at, deadline_at
                """
            ).first()
        else { return nil }
        return (
            try row.decode(column: "user_id", as: String?.self).map(UserID.init(rawValue:)),
            try row.decode(column: "transaction_id", as: String.self),
            Date(millis: try row.decode(column: "requested_at", as: Int64.self)),
            Date(millis: try row.decode(column: "deadline_at", as: Int64.self))
        )
    }
}
