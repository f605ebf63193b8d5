import Foundation
import StorekeeperCore
import StorekeeperStorage

/// The operator console's own writes: sessions and the operator log, through the ledger like every other write.
extension Ledger {
    /// Opens `session` and logs the sign-in, together.
    public func openConsoleSession(_ session: ConsoleStore.Session) async throws {
        try await write { uow in
            try await ConsoleSessionsTable.insert(session, on: uow.db)
            try await ConsoleSessionsTable.recordAction(
                operatorName: session.operatorName,
                role: session.role,
                action: "signed_in",
                subject: session.operatorName,
                detail: nil,
                at: session.createdAt,
                on: uow.db
            )
        }
    }

    /// Ends the session whose cookie token hashes to `tokenHash`.
    public func closeConsoleSession(_ tokenHash: String) async throws {
        try await write { uow in try await ConsoleSessionsTable.delete(tokenHash, on: uow.db) }
    }

    /// Appends one line to the operator log.
    public func recordOperatorAction(operatorName: String, role: String, action: String, subject: String, detail: String?) async throws {
        try await write { uow in
            try await ConsoleSessionsTable.recordAction(
                operatorName: operatorName,
                role: role,
                action: action,
                subject: subject,
                detail: detail,
                at: uow.now,
                on: uow.db
            )
        }
    }
}
