import SQLKit

/// `notification_headers`: JWS headers (certificate chains) shared by stored bodies and signed transactions,
/// keyed by their SHA-256 (see ``CompactNotificationBody`` and ``StoredSignedData``).
public enum NotificationHeadersTable {
    /// Stores the headers not stored yet (almost always the same few chains, so almost always already there).
    static func insert(_ headers: [String: String], on db: any SQLDatabase) async throws {
        guard !headers.isEmpty else { return }
        var insert = BulkInsert(into: "notification_headers", columns: ["digest", "header"], suffix: "ON CONFLICT (digest) DO NOTHING")
        for (digest, header) in headers.sorted(by: { $0.key < $1.key }) { insert.values([digest, header]) }
        try await insert.run(on: db)
    }

    /// The headers with these digests.
    static func find(_ digests: Set<String>, on db: any SQLDatabase) async throws -> [String: String] {
        guard !digests.isEmpty else { return [:] }
        var headers: [String: String] = [:]
        for row in try await db.raw("SELECT digest, header FROM notification_headers WHERE digest IN (\(binds: digests.sorted()))").all() {
            headers[try row.decode(column: "digest", as: String.self)] = try row.decode(column: "header", as: String.self)
        }
        return headers
    }
}
