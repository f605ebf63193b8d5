/// Everything a paywall needs in one value: every product on sale that the App Store sells here, and one
/// ``Offering`` per subscription group, from the server's catalog for this user joined with StoreKit's products.
public struct Offerings: Sendable, Hashable {
    /// Every product on sale, in the catalog's order (consumables for a coin shop, passes, subscriptions).
    public let products: [StoreProduct]
    /// One per subscription group with something to sell this user, in the catalog's order.
    public let all: [Offering]
    /// Catalog products the App Store did not return here (not approved, not sold in this storefront): left out.
    public let unavailable: [String]

    /// The first group's offering: the main paywall of an app with one subscription group.
    public var current: Offering? { all.first }

    /// The offering of a subscription group.
    public subscript(group: String) -> Offering? { all.first { $0.id == group } }

    /// A product on sale, by id.
    public func product(_ id: String) -> StoreProduct? { products.first { $0.id == id } }
}
