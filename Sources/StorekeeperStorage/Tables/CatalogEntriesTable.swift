import Foundation
import SQLKit
import StorekeeperCore

/// `catalog_entries`: product and campaign definitions as JSON, the catalog's source of truth once seeded.
public enum CatalogEntriesTable {
    /// Writes definitions: `replace` overwrites existing ones (an admin change), otherwise existing ones win (a seed
    /// from a file). Returns how many rows were written.
    @discardableResult
    public static func write(
        _ entries: [(kind: String, id: String, definition: String)],
        replace: Bool,
        now: Date,
        on db: any SQLDatabase
    ) async throws -> Int {
        guard !entries.isEmpty else { return 0 }
        var insert = BulkInsert(
            into: "catalog_entries",
            columns: ["kind", "id", "definition", "updated_at"],
            suffix: replace
                ? "ON CONFLICT (kind, id) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at RETURNING id"
                : "ON CONFLICT (kind, id) DO NOTHING RETURNING id"
        )
        for entry in entries { insert.values([entry.kind, entry.id, entry.definition, now.millis]) }
        return try await insert.all(on: db).count
    }
}
