import Foundation
import SQLKit
import StorekeeperCore

/// The catalog as the database holds it. The database is the source of truth once seeded: a catalog file only adds
/// what the database lacks, so an admin's change (a product taken off sale) survives a restart.
public struct CatalogStore: Sendable {
    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// Adds the file's products and campaigns the database does not have; returns how many were added.
    @discardableResult
    public func seed(_ catalog: Catalog, now: Date = Date()) async throws -> Int {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var rows: [(String, String, String)] = []
        for product in catalog.products {
            rows.append(("product", product.id, String(decoding: try encoder.encode(product), as: UTF8.self)))
        }
        for campaign in catalog.campaigns {
            rows.append(("campaign", campaign.id, String(decoding: try encoder.encode(campaign), as: UTF8.self)))
        }
        let insertRows = rows
        return try await provider.withTransaction { db in
            var added = 0
            for (kind, id, definition) in insertRows {
                let row = try await db.raw(
                    """
                    INSERT INTO catalog_entries (kind, id, definition, updated_at)
                    VALUES (\(bind: kind), \(bind: id), \(bind: definition), \(bind: now.millis))
                    ON CONFLICT (kind, id) DO NOTHING RETURNING id
                    """
                ).first()
                if row != nil { added += 1 }
            }
            return added
        }
    }

    public func load() async throws -> Catalog {
        let rows = try await provider.withSession { db in
            try await db.raw("SELECT kind, id, definition FROM catalog_entries ORDER BY kind, id").all().map {
                (try $0.decode(column: "kind", as: String.self), try $0.decode(column: "definition", as: String.self))
            }
        }
        let decoder = JSONDecoder()
        var catalog = Catalog()
        for (kind, definition) in rows {
            switch kind {
            case "product": catalog.products.append(try decoder.decode(CatalogProduct.self, from: Data(definition.utf8)))
            case "campaign": catalog.campaigns.append(try decoder.decode(OfferCampaign.self, from: Data(definition.utf8)))
            default: continue
            }
        }
        return catalog
    }

    /// Replaces one product definition.
    public func save(_ product: CatalogProduct, now: Date = Date()) async throws {
        try await save(kind: "product", id: product.id, value: product, now: now)
    }

    /// Replaces one campaign definition.
    public func save(_ campaign: OfferCampaign, now: Date = Date()) async throws {
        try await save(kind: "campaign", id: campaign.id, value: campaign, now: now)
    }

    private func save(kind: String, id: String, value: some Encodable, now: Date) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let definition = String(decoding: try encoder.encode(value), as: UTF8.self)
        try await provider.withSession { db in
            try await db.raw(
                """
                INSERT INTO catalog_entries (kind, id, definition, updated_at)
                VALUES (\(bind: kind), \(bind: id), \(bind: definition), \(bind: now.millis))
                ON CONFLICT (kind, id) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at
                """
            ).run()
        }
    }
}
