import SQLKit

/// One named, append-only schema step. Once released, a migration is never edited: changes are new migrations.
public struct Migration: Sendable {
    public let name: String
    public let apply: @Sendable (any SQLDatabase, DatabaseKind) async throws -> Void

    public init(_ name: String, apply: @escaping @Sendable (any SQLDatabase, DatabaseKind) async throws -> Void) {
        self.name = name
        self.apply = apply
    }
}
