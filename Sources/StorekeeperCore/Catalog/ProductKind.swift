/// The four kinds of In-App Purchase, as the catalog declares them.
public enum ProductKind: String, Sendable, Hashable, Codable, CaseIterable {
    case consumable
    case nonConsumable
    case nonRenewing
    case autoRenewable
}
