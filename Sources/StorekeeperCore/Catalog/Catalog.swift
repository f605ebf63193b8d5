import Foundation

/// The products and offer campaigns the server sells, loaded from a file and changed through the admin API.
public struct Catalog: Sendable, Hashable, Codable {
    public var products: [CatalogProduct]
    public var campaigns: [OfferCampaign]
    /// What subscribers about to cancel are shown (Retention Messaging), first match wins. Read from the file at
    /// start; not stored in the database nor edited through the admin API.
    public var retention: [RetentionRule]

    public init(products: [CatalogProduct] = [], campaigns: [OfferCampaign] = [], retention: [RetentionRule] = []) {
        self.products = products
        self.campaigns = campaigns
        self.retention = retention
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        products = try c.decodeIfPresent([CatalogProduct].self, forKey: .products) ?? []
        campaigns = try c.decodeIfPresent([OfferCampaign].self, forKey: .campaigns) ?? []
        retention = try c.decodeIfPresent([RetentionRule].self, forKey: .retention) ?? []
    }

    /// Loads and validates a catalog file.
    public static func load(from url: URL) throws -> Catalog {
        let catalog = try JSONDecoder().decode(Catalog.self, from: Data(contentsOf: url))
        try catalog.validate()
        return catalog
    }

    /// Throws ``CatalogError/invalid(_:)`` naming the first problem.
    public func validate() throws(CatalogError) {
        var seen = Set<String>()
        for product in products {
            if let problem = product.problem { throw .invalid(problem) }
            if !seen.insert(product.id).inserted { throw .invalid("product \(product.id) is listed twice") }
        }
        for product in products {
            if let variant = product.introductoryOfferFreeVariant, self.product(variant) == nil {
                throw .invalid("\(product.id) names unknown introductoryOfferFreeVariant \(variant)")
            }
        }
        var campaignIds = Set<String>()
        for campaign in campaigns {
            if let problem = campaign.problem { throw .invalid(problem) }
            if !campaignIds.insert(campaign.id).inserted { throw .invalid("campaign \(campaign.id) is listed twice") }
            for productId in campaign.productIds where product(productId)?.kind != .autoRenewable {
                throw .invalid("campaign \(campaign.id) names \(productId), which is not an auto-renewable product")
            }
        }
        var ruleIds = Set<String>()
        for rule in retention {
            if let problem = rule.problem(in: self) { throw .invalid(problem) }
            if !ruleIds.insert(rule.id).inserted { throw .invalid("retention rule \(rule.id) is listed twice") }
        }
    }

    public func product(_ id: String) -> CatalogProduct? {
        products.first { $0.id == id }
    }

    /// Replaces (or adds) one product definition.
    public mutating func upsert(_ product: CatalogProduct) {
        if let index = products.firstIndex(where: { $0.id == product.id }) {
            products[index] = product
        } else {
            products.append(product)
        }
    }

    /// The subscription groups the catalog uses, in first-seen order.
    public var subscriptionGroups: [String] {
        var seen = Set<String>()
        return products.compactMap(\.subscriptionGroup).filter { seen.insert($0).inserted }
    }
}

/// A catalog that cannot be used.
public enum CatalogError: Error, Sendable, Hashable, CustomStringConvertible {
    case invalid(String)

    public var description: String {
        switch self {
        case .invalid(let reason): "invalid catalog: \(reason)"
        }
    }
}
