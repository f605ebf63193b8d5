import Foundation
import PostgresKit
import SQLKit
import SQLiteKit
import StorageTestSupport
import Testing

@testable import StorekeeperStorage

/// `BulkInsert`'s SQL text for each dialect (placeholders, binding order, NULLs, suffix) and real multi-row round
/// trips on SQLite and, when configured, PostgreSQL.
@Suite struct BulkInsertTests {
    static let sqlite = DialectOnlyDatabase(dialect: SQLiteDialect())
    static let postgres = DialectOnlyDatabase(dialect: PostgresDialect())

    /// Four rows of three columns, with NULLs and Int64's extremes.
    static func sample(suffix: String = "") -> BulkInsert {
        var insert = BulkInsert(into: "probe", columns: ["id", "label", "amount"], suffix: suffix)
        insert.values([Int64(1), "one", Int64(10)] as [any Encodable & Sendable])
        insert.values([Int64(2), nil as String?, Int64.max] as [any Encodable & Sendable])
        insert.values([Int64(3), "three", nil as Int64?] as [any Encodable & Sendable])
        insert.values([Int64(4), "four", Int64.min] as [any Encodable & Sendable])
        return insert
    }

    static let sampleBinds = #"[1,"one",10,2,null,9223372036854775807,3,"three",null,4,"four",-9223372036854775808]"#

    /// The binds as one JSON array: their order, their values, and NULL as `null`.
    static func json(_ binds: [any Encodable & Sendable]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return String(decoding: try encoder.encode(binds.map(AnyBind.init)), as: UTF8.self)
    }

    /// Encodes a bind as what it holds, so `nil` becomes `null`.
    struct AnyBind: Encodable {
        let value: any Encodable

        func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
    }

    /// One row as read back.
    struct ProbeRow: Equatable, CustomStringConvertible {
        let id: Int64
        let label: String?
        let amount: Int64?
        let note: String?

        var description: String { "(\(id), \(label ?? "NULL"), \(amount.map(String.init) ?? "NULL"), \(note ?? "NULL"))" }
    }

    static func createProbe(_ provider: any DatabaseProvider) async throws {
        try await provider.withSession { db in
            try await db.raw("CREATE TABLE bulk_probe (id BIGINT PRIMARY KEY, label TEXT, amount BIGINT, note TEXT)").run()
        }
    }

    static func readProbe(_ provider: any DatabaseProvider) async throws -> [ProbeRow] {
        try await provider.withSession { db in
            try await db.raw("SELECT id, label, amount, note FROM bulk_probe ORDER BY id").all().map { row in
                ProbeRow(
                    id: try row.decode(column: "id", as: Int64.self),
                    label: try row.decode(column: "label", as: String?.self),
                    amount: try row.decode(column: "amount", as: Int64?.self),
                    note: try row.decode(column: "note", as: String?.self)
                )
            }
        }
    }

    // MARK: SQL text

    @Test func sqliteGetsPlainQuestionMarksAndRowMajorBinds() throws {
        let (sql, binds) = Self.sqlite.serialize(Self.sample())
        #expect(sql == "INSERT INTO probe (id, label, amount) VALUES (?, ?, ?), (?, ?, ?), (?, ?, ?), (?, ?, ?)")
        #expect(try Self.json(binds) == Self.sampleBinds)
    }

    @Test func postgresGetsNumberedPlaceholdersPastNine() throws {
        let (sql, binds) = Self.postgres.serialize(Self.sample())
        #expect(sql == "INSERT INTO probe (id, label, amount) VALUES ($1, $2, $3), ($4, $5, $6), ($7, $8, $9), ($10, $11, $12)")
        #expect(try Self.json(binds) == Self.sampleBinds)
    }

    @Test func theSuffixFollowsTheValuesAfterOneSpace() {
        let suffix = "ON CONFLICT (id) DO NOTHING RETURNING id"
        var insert = BulkInsert(into: "probe", columns: ["id"], suffix: suffix)
        insert.values([Int64(1)] as [any Encodable & Sendable])
        insert.values([Int64(2)] as [any Encodable & Sendable])
        #expect(Self.sqlite.serialize(insert).sql == "INSERT INTO probe (id) VALUES (?), (?) ON CONFLICT (id) DO NOTHING RETURNING id")
        #expect(Self.postgres.serialize(insert).sql == "INSERT INTO probe (id) VALUES ($1), ($2) ON CONFLICT (id) DO NOTHING RETURNING id")
        #expect(!Self.postgres.serialize(Self.sample()).sql.hasSuffix(" "), "no suffix, no trailing space")
    }

    /// Serialized after other binds, the numbering continues from them and the binds keep their order.
    @Test func numberingContinuesAfterEarlierBinds() throws {
        let composite = SQLList([SQLBind("first"), SQLBind("second"), Self.sample()], separator: SQLRaw(" "))
        let (postgresSQL, binds) = Self.postgres.serialize(composite)
        #expect(
            postgresSQL
                == "$1 $2 INSERT INTO probe (id, label, amount) VALUES ($3, $4, $5), ($6, $7, $8), ($9, $10, $11), ($12, $13, $14)"
        )
        #expect(try Self.json(binds) == #"["first","second","# + Self.sampleBinds.dropFirst())
        // SQLite numbers a bare "?" one past the largest number so far, so "?1 ?2" then "?" is 3, 4, ….
        let (sqliteSQL, _) = Self.sqlite.serialize(composite)
        #expect(sqliteSQL == "?1 ?2 INSERT INTO probe (id, label, amount) VALUES (?, ?, ?), (?, ?, ?), (?, ?, ?), (?, ?, ?)")
    }

    @Test func isEmptyUntilARowIsAdded() {
        var insert = BulkInsert(into: "probe", columns: ["id"])
        #expect(insert.isEmpty)
        insert.values([Int64(1)] as [any Encodable & Sendable])
        #expect(!insert.isEmpty)
        #expect(insert.rows.count == 1)
    }

    @Test func aRowOfTheWrongWidthStops() async {
        await #expect(processExitsWith: .failure) {
            var insert = BulkInsert(into: "probe", columns: ["id", "label"])
            insert.values([Int64(1)] as [any Encodable & Sendable])
        }
    }

    // MARK: Round trips

    /// Nothing to insert runs no statement at all: the table does not even exist.
    @Test func nothingToInsertRunsNothing() async throws {
        try await StorageHarness.withEachProvider { provider in
            let insert = BulkInsert(into: "no_such_table", columns: ["id"], suffix: "RETURNING id")
            try await provider.withSession { db in
                try await insert.run(on: db)
                #expect(try await insert.all(on: db).isEmpty)
            }
        }
    }

    @Test func multiRowValuesWithNullsAndInt64ExtremesRoundTrip() async throws {
        var expected = [
            ProbeRow(id: .min, label: "min", amount: .max, note: nil),
            ProbeRow(id: .max, label: nil, amount: .min, note: "max"),
            ProbeRow(id: 0, label: "", amount: 0, note: nil),
            ProbeRow(id: -1, label: "quote ' \" ; -- ? $1 ü", amount: nil, note: nil),
        ]
        // Enough rows for thousands of binds and multi-digit placeholders.
        for index in Int64(1)...600 {
            expected.append(
                ProbeRow(
                    id: index,
                    label: "row-\(index)",
                    amount: index.isMultiple(of: 5) ? nil : index * 1_000_000_007,
                    note: index.isMultiple(of: 3) ? nil : "note \(index)"
                )
            )
        }
        var insert = BulkInsert(into: "bulk_probe", columns: ["id", "label", "amount", "note"])
        for row in expected {
            insert.values([row.id, row.label, row.amount, row.note] as [any Encodable & Sendable])
        }
        let statement = insert
        try await StorageHarness.withEachProvider { provider in
            try await Self.createProbe(provider)
            try await provider.withTransaction { db in try await statement.run(on: db) }
            let read = try await Self.readProbe(provider)
            #expect(read == expected.sorted { $0.id < $1.id }, "\(provider.kind)")
        }
    }

    /// `ON CONFLICT … DO NOTHING RETURNING` returns exactly the rows that were new; the existing ones are untouched.
    @Test func aConflictSuffixReturnsOnlyTheNewRows() async throws {
        try await StorageHarness.withEachProvider { provider in
            try await Self.createProbe(provider)
            var first = BulkInsert(into: "bulk_probe", columns: ["id", "label", "amount", "note"])
            first.values([Int64(1), "kept", Int64.max, nil as String?] as [any Encodable & Sendable])
            first.values([Int64.min, "kept too", nil as Int64?, "x"] as [any Encodable & Sendable])
            let existing = first
            try await provider.withTransaction { db in try await existing.run(on: db) }

            var second = BulkInsert(
                into: "bulk_probe",
                columns: ["id", "label", "amount", "note"],
                suffix: "ON CONFLICT (id) DO NOTHING RETURNING id"
            )
            second.values([Int64(1), "replaced?", Int64(0), "no"] as [any Encodable & Sendable])
            second.values([Int64(2), nil as String?, Int64.min, nil as String?] as [any Encodable & Sendable])
            second.values([Int64.min, "replaced?", Int64(0), "no"] as [any Encodable & Sendable])
            second.values([Int64.max, "new", nil as Int64?, nil as String?] as [any Encodable & Sendable])
            let upsert = second
            let returned = try await provider.withTransaction { db in
                try await upsert.all(on: db).map { try $0.decode(column: "id", as: Int64.self) }
            }
            #expect(returned.sorted() == [2, .max], "\(provider.kind)")
            #expect(
                try await Self.readProbe(provider) == [
                    ProbeRow(id: .min, label: "kept too", amount: nil, note: "x"),
                    ProbeRow(id: 1, label: "kept", amount: .max, note: nil),
                    ProbeRow(id: 2, label: nil, amount: .min, note: nil),
                    ProbeRow(id: .max, label: "new", amount: nil, note: nil),
                ],
                "\(provider.kind)"
            )
        }
    }

    @Test func anInsertPastTheParameterLimitIsSplitAndLandsWhole() async throws {
        // 25,000 rows of 3 values: 75,000 parameters, past PostgreSQL's 65,535 and SQLite's 32,766.
        var insert = BulkInsert(into: "bulk_probe", columns: ["id", "label", "amount"], suffix: "ON CONFLICT (id) DO NOTHING RETURNING id")
        for id in 1...25_000 { insert.values([Int64(id), "row \(id)", Int64(id * 2)] as [any Encodable & Sendable]) }
        #expect(insert.statements.count == 3)
        #expect(insert.statements.allSatisfy { $0.rows.count * 3 <= BulkInsert.maximumParameters })
        #expect(insert.statements.flatMap(\.rows).count == 25_000)
        let whole = insert
        try await StorageHarness.withEachProvider { provider in
            try await Self.createProbe(provider)
            let returned = try await provider.withSession { db in try await whole.all(on: db).count }
            #expect(returned == 25_000)
            let rows = try await Self.readProbe(provider)
            #expect(rows.count == 25_000 && rows.last == ProbeRow(id: 25_000, label: "row 25000", amount: 50_000, note: nil))
        }
    }
}
