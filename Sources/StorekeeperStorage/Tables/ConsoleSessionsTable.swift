import Foundation
import SQLKit
import StorekeeperCore

/// `console_sessions` and `operator_actions`: the operator console's sign-ins (only the SHA-256 of each cookie token)
/// and the log of what operators did.
public enum ConsoleSessionsTable {
    /// Stores `session` and forgets sessions that expired by its start.
    public static func insert(_ session: ConsoleStore.Session, on db: any SQLDatabase) async throws {
        try await db.insert(into: "console_sessions")
            .columns("token_hash", "operator", "role", "csrf", "created_at", "expires_at")
            .values(
                SQLBind(session.tokenHash),
                SQLBind(session.operatorName),
                SQLBind(session.role),
                SQLBind(session.csrf),
                SQLBind(session.createdAt.millis),
                SQLBind(session.expiresAt.millis)
            )
            .run()
        try await db.raw("DELETE FROM console_sessions WHERE expires_at <= \(bind: session.createdAt.millis)").run()
    }

    public static func delete(_ tokenHash: String, on db: any SQLDatabase) async throws {
        try await db.raw("DELETE FROM console_sessions WHERE token_hash = \(bind: tokenHash)").run()
    }

    /// Appends one line to the operator log.
    public static func recordAction(
        operatorName: String,
        role: String,
        action: String,
        subject: String,
        detail: String?,
        at: Date,
        on db: any SQLDatabase
    ) async throws {
        try await db.insert(into: "operator_actions")
            .columns("operator", "role", "action", "subject", "detail", "created_at")
            .values(SQLBind(operatorName), SQLBind(role), SQLBind(action), SQLBind(subject), SQLBind(detail), SQLBind(at.millis))
            .run()
    }
}
