import Foundation
import SQLKit
import StorekeeperCore

/// `events`: the outbox. Every change a consumer of the app's backend cares about is an event row written in the
/// same database transaction as the change, so a crash leaves both or neither.
///
/// Each event carries the user's own sequence number — gap-free and in commit order, because the user's row in
/// `user_event_sequences` is locked from the moment it is advanced until the transaction ends — and a global
/// `position` in commit order: on PostgreSQL positions are taken under a transaction-scoped advisory lock, so no
/// transaction can commit a smaller position after a larger one became visible (SQLite has one writer anyway).
public enum EventsTable {
    /// The advisory lock key under which PostgreSQL positions are taken, and ledger batches run.
    static let positionLock: Int64 = 4_242_424_243

    /// On PostgreSQL, waits until no other server's ledger batch is running, and keeps them waiting until this
    /// transaction ends; taken as a batch transaction's first statement. Batches touch many users' rows (wallets,
    /// outbox sequences, grants) in orders their commands decide, so two servers' batches could each hold a row the
    /// other needs and deadlock; one batch at a time cannot. Each server already runs one batch at a time, and the
    /// outbox's position lock already serialised every batch's end, so this costs servers sharing a database little
    /// (their verification, the costly part of a purchase, still runs in parallel outside the transaction).
    public static func lockLedger(kind: DatabaseKind, on db: any SQLDatabase) async throws {
        guard kind == .postgres else { return }
        try await db.raw("SELECT pg_advisory_xact_lock(\(bind: positionLock))").run()
    }

    /// A stored event.
    public struct Stored: Sendable, Hashable {
        public var position: Int64
        public var userSequence: Int64
        public var event: LedgerEvent
    }

    /// Appends `events`: advances each user's sequence once for all of that user's events, then inserts them in
    /// order. Returns nothing: readers page by position.
    public static func append(_ events: [LedgerEvent], kind: DatabaseKind, on db: any SQLDatabase) async throws {
        guard !events.isEmpty else { return }
        var counts: [UserID: Int64] = [:]
        for event in events { counts[event.user, default: 0] += 1 }
        var advance = BulkInsert(
            into: "user_event_sequences",
            columns: ["user_id", "last_seq"],
            suffix: """
                ON CONFLICT (user_id) DO UPDATE SET last_seq = user_event_sequences.last_seq + excluded.last_seq
                RETURNING user_id, last_seq
                """
        )
        for user in counts.keys.sorted() { advance.values([user.rawValue, counts[user]!]) }
        var next: [UserID: Int64] = [:]
        for row in try await advance.all(on: db) {
            let user = UserID(rawValue: try row.decode(column: "user_id", as: String.self))
            next[user] = try row.decode(column: "last_seq", as: Int64.self) - (counts[user] ?? 0) + 1
        }
        if kind == .postgres { try await db.raw("SELECT pg_advisory_xact_lock(\(bind: positionLock))").run() }
        var insert = BulkInsert(into: "events", columns: ["user_id", "user_seq", "type", "subject", "occurred_at", "payload"])
        for event in events {
            guard let sequence = next[event.user] else {
                throw LedgerError.noEventSequence(event.user)
            }
            next[event.user] = sequence + 1
            insert.values([
                event.user.rawValue, sequence, event.type.rawValue, event.subject, event.occurredAt.millis,
                payload(event.details),
            ])
        }
        try await insert.run(on: db)
    }

    /// `details` as a JSON object with sorted keys. Written by hand: it runs for every event of every batch on the
    /// one writer, where Foundation's encoder cost a measurable share of a purchase's CPU.
    static func payload(_ details: [String: String]) -> String {
        var out = "{"
        for (index, key) in details.keys.sorted().enumerated() {
            if index > 0 { out += "," }
            appendJSONString(key, to: &out)
            out += ":"
            appendJSONString(details[key]!, to: &out)
        }
        return out + "}"
    }

    /// `text` as a JSON string literal (RFC 8259): quote, backslash and control characters escaped.
    static func appendJSONString(_ text: String, to out: inout String) {
        out += "\""
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            out += text
            out += "\""
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }

    /// `details` back from a payload: read directly when it is the flat object ``payload(_:)`` writes, with
    /// Foundation's decoder for anything else. Readers of the outbox (the webhook sender, the business metrics, the
    /// pull API) read every event's payload, and Foundation's decoder was the larger part of their CPU.
    static func details(fromPayload payload: String) throws -> [String: String] {
        if let flat = FlatPayloadReader.read(payload) { return flat }
        return try JSONDecoder().decode([String: String].self, from: Data(payload.utf8))
    }

    /// The latest event's position (0 when there is none).
    public static func lastPosition(on db: any SQLDatabase) async throws -> Int64 {
        try await db.raw("SELECT COALESCE(MAX(position), 0) AS last FROM events").first()?.decode(column: "last", as: Int64.self) ?? 0
    }

    /// The events at `positions` (those that exist), oldest first.
    public static func at(_ positions: [Int64], on db: any SQLDatabase) async throws -> [Stored] {
        guard !positions.isEmpty else { return [] }
        return try await db.raw(
            "SELECT position, user_id, user_seq, type, subject, occurred_at, payload FROM events WHERE position IN (\(binds: positions)) ORDER BY position"
        ).all().map(stored(row:))
    }

    /// Events after `position` (of one user, of some types, when given), oldest first.
    public static func after(
        _ position: Int64,
        user: UserID? = nil,
        types: [LedgerEvent.EventType]? = nil,
        limit: Int,
        on db: any SQLDatabase
    ) async throws -> [Stored] {
        var filter: SQLQueryString = user.map { " AND user_id = \(bind: $0.rawValue)" } ?? ""
        if let types { filter = filter + " AND type IN (\(binds: types.map(\.rawValue)))" }
        return try await db.raw(
            "SELECT position, user_id, user_seq, type, subject, occurred_at, payload FROM events WHERE position > \(bind: position)"
                + filter + " ORDER BY position LIMIT \(bind: limit)"
        ).all().map(stored(row:))
    }

    static func stored(row: any SQLRow) throws -> Stored {
        Stored(
            position: try row.decode(column: "position", as: Int64.self),
            userSequence: try row.decode(column: "user_seq", as: Int64.self),
            event: LedgerEvent(
                type: LedgerEvent.EventType(rawValue: try row.decode(column: "type", as: String.self)) ?? .unknown,
                user: UserID(rawValue: try row.decode(column: "user_id", as: String.self)),
                subject: try row.decode(column: "subject", as: String.self),
                occurredAt: Date(millis: try row.decode(column: "occurred_at", as: Int64.self)),
                details: try details(fromPayload: try row.decode(column: "payload", as: String.self))
            )
        )
    }
}

/// Reads the flat JSON object of string values that ``EventsTable/payload(_:)`` writes (`{"key":"value",...}`, no
/// whitespace, the escapes ``EventsTable/appendJSONString(_:to:)`` produces). Anything else — other whitespace,
/// nesting, numbers, a malformed escape — gives nil, and the caller falls back to a full JSON decoder.
enum FlatPayloadReader {
    static func read(_ payload: String) -> [String: String]? {
        let bytes = Array(payload.utf8)
        return bytes.withUnsafeBufferPointer { read($0) }
    }

    private static func read(_ bytes: UnsafeBufferPointer<UInt8>) -> [String: String]? {
        var index = 0
        let count = bytes.count
        guard count >= 2, bytes[0] == UInt8(ascii: "{") else { return nil }
        index = 1
        var result: [String: String] = [:]
        if bytes[index] == UInt8(ascii: "}") { return index + 1 == count ? result : nil }
        while true {
            guard let key = string(bytes, &index), index < count, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            guard let value = string(bytes, &index), index < count else { return nil }
            result[key] = value
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): return index + 1 == count ? result : nil
            default: return nil
            }
        }
    }

    /// A string literal starting at `index` (its opening quote); `index` ends past the closing quote.
    private static func string(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> String? {
        let count = bytes.count
        guard index < count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        index += 1
        let start = index
        // The common case: no escapes, so the bytes between the quotes are the string.
        while index < count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"), bytes[index] >= 0x20 {
            index += 1
        }
        guard index < count else { return nil }
        if bytes[index] == UInt8(ascii: "\"") {
            defer { index += 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        }
        var scalars = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self).unicodeScalars
        var pending: [UInt8] = []
        func flush() {
            guard !pending.isEmpty else { return }
            scalars.append(contentsOf: String(decoding: pending, as: UTF8.self).unicodeScalars)
            pending.removeAll(keepingCapacity: true)
        }
        while index < count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                guard index + 1 < count else { return nil }
                let escaped = bytes[index + 1]
                index += 2
                switch escaped {
                case UInt8(ascii: "\""): pending.append(escaped)
                case UInt8(ascii: "\\"): pending.append(escaped)
                case UInt8(ascii: "/"): pending.append(escaped)
                case UInt8(ascii: "n"): pending.append(0x0A)
                case UInt8(ascii: "r"): pending.append(0x0D)
                case UInt8(ascii: "t"): pending.append(0x09)
                case UInt8(ascii: "u"):
                    // Only control characters are written as \u escapes; anything else goes to the full decoder.
                    guard index + 4 <= count,
                        let value = UInt8(String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<index + 4]), as: UTF8.self), radix: 16),
                        value < 0x20
                    else { return nil }
                    pending.append(value)
                    index += 4
                default: return nil
                }
            case 0..<0x20:
                return nil
            default:
                pending.append(byte)
                index += 1
            }
        }
        return nil
    }
}
