import Foundation
import SQLKit
import StorekeeperCore

/// Reads the catalog as the database holds it. The database is the source of truth once seeded: a catalog file only
/// adds what the database lacks, so an admin's change (a product taken off sale) survives a restart.
public struct CatalogStore: Sendable {
    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// The rows that hold `catalog`'s products and campaigns: kind, id and the definition as JSON.
    public static func entries(_ catalog: Catalog) throws -> [(kind: String, id: String, definition: String)] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var rows: [(kind: String, id: String, definition: String)] = []
        for product in catalog.products {
            rows.append(("product", product.id, String(decoding: try encoder.encode(product), as: UTF8.self)))
        }
        for campaign in catalog.campaigns {
            rows.append(("campaign", campaign.id, String(decoding: try encoder.encode(campaign), as: UTF8.self)))
        }
        return rows
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
}
