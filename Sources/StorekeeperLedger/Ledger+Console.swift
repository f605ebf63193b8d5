import Foundation
import StorekeeperCore
import StorekeeperStorage
import Synchronization

/// One line of the operator log: the console's record of what an operator did.
public struct OperatorAction: Sendable, Hashable {
    public var operatorName: String
    public var role: String
    public var action: String
    public var subject: String
    public var detail: String?

    public init(operatorName: String, role: String, action: String, subject: String, detail: String?) {
        self.operatorName = operatorName
        self.role = role
        self.action = action
        self.subject = subject
        self.detail = detail.map { String($0.prefix(500)) }
    }
}

/// An operator's action whose log line has not been committed yet: the first ledger write made while it is bound
/// takes it into its own transaction.
final class PendingOperatorAction: Sendable {
    enum State { case waiting, inFlight, written }

    let action: OperatorAction
    private let state = Mutex(State.waiting)

    init(_ action: OperatorAction) { self.action = action }

    /// The line, if no write has taken it yet; the caller's write now carries it.
    func take() -> OperatorAction? {
        state.withLock { state in
            guard state == .waiting else { return nil }
            state = .inFlight
            return action
        }
    }

    /// The carrying write committed (`written`) or failed, leaving the line to the next write.
    func settle(written: Bool) {
        state.withLock { $0 = written ? .written : .waiting }
    }

    var isWritten: Bool { state.withLock { $0 == .written } }
}

/// The operator console's own writes: sessions and the operator log, through the ledger like every other write.
extension Ledger {
    /// The operator action whose line the next write on this task commits with.
    @TaskLocal static var pendingAction: PendingOperatorAction?

    /// Runs an operator's action with its log line bound to it: the line commits in the transaction of the first
    /// ledger write the action makes, so the change and its record commit together or not at all. An action that
    /// wrote nothing through the ledger (a request to Apple) is logged on its own once it succeeded; a failed one is
    /// not logged.
    public func logging<T: Sendable>(_ action: OperatorAction, _ body: () async throws -> T) async throws -> T {
        let pending = PendingOperatorAction(action)
        let result = try await Self.$pendingAction.withValue(pending) { try await body() }
        if !pending.isWritten { try await recordOperatorAction(action) }
        return result
    }

    /// Opens `session` and logs the sign-in, together.
    public func openConsoleSession(_ session: ConsoleStore.Session) async throws {
        try await write { uow in
            try await ConsoleSessionsTable.insert(session, on: uow.db)
            try await Self.record(
                OperatorAction(
                    operatorName: session.operatorName,
                    role: session.role,
                    action: "signed_in",
                    subject: session.operatorName,
                    detail: nil
                ),
                at: session.createdAt,
                in: uow
            )
        }
    }

    /// Ends the session whose cookie token hashes to `tokenHash`.
    public func closeConsoleSession(_ tokenHash: String) async throws {
        try await write { uow in try await ConsoleSessionsTable.delete(tokenHash, on: uow.db) }
    }

    /// Appends one line to the operator log on its own (an action that made several writes, logged once it ended).
    public func recordOperatorAction(_ action: OperatorAction) async throws {
        try await Self.$pendingAction.withValue(nil) {
            try await write { uow in try await Self.record(action, at: uow.now, in: uow) }
        }
    }

    static func record(_ action: OperatorAction, at date: Date, in uow: UnitOfWork) async throws {
        try await ConsoleSessionsTable.recordAction(
            operatorName: action.operatorName,
            role: action.role,
            action: action.action,
            subject: action.subject,
            detail: action.detail,
            at: date,
            on: uow.db
        )
    }
}
