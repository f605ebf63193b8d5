import Foundation
import Logging
import SQLKit
import StorekeeperCore
import StorekeeperStorage

/// One database transaction's worth of changes: the connection they are made on, the moment they are made at, and
/// the audit entries and outbox events they produce, written together once at the end (``finish()``) with one
/// statement per table.
///
/// Work in a savepoint gets a child (``savepoint(_:_:)``) whose records join its parent's only when the savepoint is
/// released, so a rolled-back step leaves no audit entry or event behind. Writing every event once, at the end, is
/// what keeps PostgreSQL free of deadlocks between servers: the users' outbox sequence rows are locked in one sorted
/// order per transaction, never in the order the batch's steps happened to touch them.
///
/// It lives inside a single transaction body and is used by one task at a time; it is `Sendable` only to cross the
/// transaction closure, never to be shared.
final class UnitOfWork: @unchecked Sendable {
    let db: any SQLDatabase
    let kind: DatabaseKind
    let now: Date
    let logger: Logger
    /// The unit of work this one's records join when its savepoint is released; nil for the transaction's own.
    private let parent: UnitOfWork?
    private var audit: [AuditEntry] = []
    private var events: [LedgerEvent] = []
    /// Set on the transaction's own unit of work once a savepoint could not be rolled back: the transaction is
    /// gone, so every later savepoint and ``finish()`` fail with it instead of writing outside a transaction.
    private var lost: SavepointLost?
    private var root: UnitOfWork { parent?.root ?? self }

    convenience init(db: any SQLDatabase, kind: DatabaseKind, now: Date, logger: Logger) {
        self.init(db: db, kind: kind, now: now, logger: logger, parent: nil)
    }

    private init(db: any SQLDatabase, kind: DatabaseKind, now: Date, logger: Logger, parent: UnitOfWork?) {
        self.db = db
        self.kind = kind
        self.now = now
        self.logger = logger
        self.parent = parent
    }

    /// Runs `body` in a savepoint with a unit of work of its own: released, its records join this one's; rolled
    /// back (`body` threw), they are dropped with its changes.
    func savepoint<T: Sendable>(_ name: String, _ body: (UnitOfWork) async throws -> T) async throws -> T {
        if let lost = root.lost { throw lost }
        let own = UnitOfWork(db: db, kind: kind, now: now, logger: logger, parent: self)
        let value: T
        do {
            value = try await withSavepoint(name, on: db) { try await body(own) }
        } catch let error as SavepointLost {
            root.lost = error
            throw error
        }
        audit.append(contentsOf: own.audit)
        events.append(contentsOf: own.events)
        return value
    }

    /// Records why something changed (invariant 4).
    func record(_ entry: AuditEntry) { audit.append(entry) }

    func record(_ entries: [AuditEntry]) { audit.append(contentsOf: entries) }

    /// Queues an event for the outbox, in this transaction.
    func emit(_ event: LedgerEvent) { events.append(event) }

    /// `events`, and for each one about a subscription that has team members (multiseat, seats claimed), a
    /// `team.seat_changed` event to each member: their access follows the purchaser's subscription.
    private func withTeamMembers(_ events: [LedgerEvent]) async throws -> [LedgerEvent] {
        func original(_ event: LedgerEvent) -> String? {
            switch event.type {
            case .subscriptionChanged: event.subject
            case .delivered where event.details["productKind"] == ProductKind.autoRenewable.rawValue: event.details["originalTransactionId"]
            case .refunded, .transferred: event.details["originalTransactionId"]
            default: nil
            }
        }
        let originals = events.compactMap(original)
        guard !originals.isEmpty else { return events }
        let seats = try await TeamSeatsTable.claimed(originals: originals, on: db)
        guard !seats.isEmpty else { return events }
        var all = events
        for event in events {
            guard let about = original(event) else { continue }
            for seat in seats where seat.originalTransactionId == about {
                guard let member = seat.member, member != event.user else { continue }
                all.append(
                    Ledger.seatEvent(seat, member: member, change: "subscription", at: event.occurredAt, extra: ["event": event.type.rawValue])
                )
            }
        }
        return all
    }

    /// Writes what the transaction recorded, its savepoints' included; called once, as its last step before the
    /// commit.
    func finish() async throws {
        if let lost = root.lost { throw lost }
        let entries = audit
        let pending = try await withTeamMembers(events)
        audit = []
        events = []
        try await AuditTable.insert(entries, on: db)
        try await EventsTable.append(pending, kind: kind, on: db)
    }
}
