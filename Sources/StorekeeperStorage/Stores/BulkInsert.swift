import SQLKit

/// A multi-row `INSERT … VALUES (…), (…) <suffix>`, serialized in one pass.
///
/// SQLKit's insert builder turns every value into an expression of its own and serializes each through the dialect,
/// which for a batch of a hundred rows of a dozen or more columns took a quarter of the SQLite writer's time. Here
/// the placeholders are written directly. Table, column and suffix text are the caller's constants, never input.
struct BulkInsert: SQLExpression {
    let table: String
    let columns: [String]
    /// Text after the values: `ON CONFLICT …`, `RETURNING …`.
    var suffix: String
    private(set) var rows: [[any Encodable & Sendable]] = []

    init(into table: String, columns: [String], suffix: String = "") {
        self.table = table
        self.columns = columns
        self.suffix = suffix
    }

    var isEmpty: Bool { rows.isEmpty }

    mutating func values(_ row: [any Encodable & Sendable]) {
        precondition(row.count == columns.count, "\(table): \(row.count) values for \(columns.count) columns")
        rows.append(row)
    }

    func serialize(to serializer: inout SQLSerializer) {
        // The dialect's placeholder style, asked once rather than per value. SQLite's "?NNN" becomes a plain "?"
        // (the same numbering, as values are bound in order, and cheaper for SQLite to parse); PostgreSQL's "$n"
        // is written as is. A "$" in SQLite would name a parameter, each looked up among all earlier names.
        var probe = SQLSerializer(database: serializer.database)
        serializer.dialect.bindPlaceholder(at: 1).serialize(to: &probe)
        let numbered = !probe.sql.hasPrefix("?")
        let prefix = numbered ? String(probe.sql.dropLast()) : "?"
        var sql = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES "
        sql.reserveCapacity(sql.utf8.count + rows.count * columns.count * (numbered ? 7 : 3) + suffix.utf8.count + 1)
        var index = serializer.binds.count
        for (number, row) in rows.enumerated() {
            sql += number == 0 ? "(" : ", ("
            for column in row.indices {
                if column > 0 { sql += ", " }
                index += 1
                sql += prefix
                if numbered { sql += String(index) }
            }
            sql += ")"
        }
        if !suffix.isEmpty {
            sql += " "
            sql += suffix
        }
        serializer.write(sql)
        serializer.binds.append(contentsOf: rows.joined())
    }

    /// The most values one statement binds: PostgreSQL numbers parameters up to 65,535 and SQLite allows 32,766 by
    /// default, so a larger insert is sent as several statements (in the caller's transaction, so still one commit).
    static let maximumParameters = 32_766

    /// The rows as statements of at most ``maximumParameters`` values each.
    var statements: [BulkInsert] {
        let perStatement = max(1, Self.maximumParameters / max(columns.count, 1))
        guard rows.count > perStatement else { return [self] }
        return stride(from: 0, to: rows.count, by: perStatement).map { start in
            var part = BulkInsert(into: table, columns: columns, suffix: suffix)
            part.rows = Array(rows[start..<min(start + perStatement, rows.count)])
            return part
        }
    }

    /// Runs the statement (or statements); nothing to insert is not an error.
    func run(on db: any SQLDatabase) async throws {
        guard !rows.isEmpty else { return }
        for statement in statements { try await db.raw("\(statement)").run() }
    }

    /// Runs the statement (or statements) and returns what its `RETURNING` suffix names.
    func all(on db: any SQLDatabase) async throws -> [any SQLRow] {
        guard !rows.isEmpty else { return [] }
        var returned: [any SQLRow] = []
        for statement in statements { returned += try await db.raw("\(statement)").all() }
        return returned
    }
}
