import Foundation
import Logging
import SQLKit
import StorekeeperCore
import StorekeeperStorage

/// One database transaction's worth of changes: the connection they are made on, the moment they are made at, and
/// the audit entries and outbox events they produce, written together at the end (``flush()``) with one statement
/// per table.
///
/// It lives inside a single transaction body and is used by one task at a time; it is `Sendable` only to cross the
/// transaction closure, never to be shared.
final class UnitOfWork: @unchecked Sendable {
    let db: any SQLDatabase
    let kind: DatabaseKind
    let now: Date
    let logger: Logger
    private var audit: [AuditEntry] = []
    private var events: [LedgerEvent] = []

    init(db: any SQLDatabase, kind: DatabaseKind, now: Date, logger: Logger) {
        self.db = db
        self.kind = kind
        self.now = now
        self.logger = logger
    }

    /// A unit of work for a savepoint inside this one: same connection and moment, its own records, flushed by
    /// whoever opened the savepoint before releasing it.
    func child() -> UnitOfWork { UnitOfWork(db: db, kind: kind, now: now, logger: logger) }

    /// Records why something changed (invariant 4).
    func record(_ entry: AuditEntry) { audit.append(entry) }

    func record(_ entries: [AuditEntry]) { audit.append(contentsOf: entries) }

    /// Queues an event for the outbox, in this transaction.
    func emit(_ event: LedgerEvent) { events.append(event) }

    /// Writes what was recorded; called once the work is done, before the commit.
    func flush() async throws {
        let entries = audit
        let pending = events
        audit = []
        events = []
        try await AuditTable.insert(entries, on: db)
        try await EventsTable.append(pending, kind: kind, on: db)
    }
}
