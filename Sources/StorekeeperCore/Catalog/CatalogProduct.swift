/// A product the server knows: what it is, what it grants, and whether it can be bought now.
///
/// Apple decides what was paid; the catalog decides what that payment is worth here (coins, an entitlement, a
/// period) and whether a new order may be created for it.
public struct CatalogProduct: Sendable, Hashable, Codable {
    /// The store's product id (App Store Connect's, or Google Play's product or subscription id).
    public var id: String
    /// The store that sells it (`appStore` unless the catalog says otherwise): a purchase is delivered only from its
    /// own store, and a paywall shows only its platform's products.
    public var store: Store
    public var kind: ProductKind
    /// The entitlement granted (non-consumable, non-renewing, auto-renewable).
    public var entitlement: String?
    /// Coins credited per unit bought (consumables).
    public var coins: Int64?
    /// How long a non-renewing pass lasts.
    public var duration: CatalogDuration?
    /// The subscription group (auto-renewable).
    public var subscriptionGroup: String?
    /// The level inside the group; 1 is the highest service (Apple's numbering).
    public var level: Int?
    /// Whether the product has an introductory offer in App Store Connect.
    public var hasIntroductoryOffer: Bool
    /// The same service without an introductory offer, sold to users who already had one (seed 001).
    public var introductoryOfferFreeVariant: String?
    /// Whether new orders may be created. A product off sale is still delivered when Apple reports it paid.
    public var onSale: Bool
    /// Whether the product gives access to content before purchase (Apple's consumption `sampleContentProvided`).
    public var sampleContentProvided: Bool
    /// The product's Apple ID in App Store Connect: Apple's subscription reports name subscriptions by it (and by
    /// reference name), not by product id. Without it, a report line is matched by name equal to the product id.
    public var appleId: Int64?

    public init(
        id: String,
        kind: ProductKind,
        entitlement: String? = nil,
        coins: Int64? = nil,
        duration: CatalogDuration? = nil,
        subscriptionGroup: String? = nil,
        level: Int? = nil,
        hasIntroductoryOffer: Bool = false,
        introductoryOfferFreeVariant: String? = nil,
        onSale: Bool = true,
        sampleContentProvided: Bool = false,
        appleId: Int64? = nil,
        store: Store = .appStore
    ) {
        self.id = id
        self.store = store
        self.kind = kind
        self.entitlement = entitlement
        self.coins = coins
        self.duration = duration
        self.subscriptionGroup = subscriptionGroup
        self.level = level
        self.hasIntroductoryOffer = hasIntroductoryOffer
        self.introductoryOfferFreeVariant = introductoryOfferFreeVariant
        self.onSale = onSale
        self.sampleContentProvided = sampleContentProvided
        self.appleId = appleId
    }

    enum CodingKeys: String, CodingKey {
        case id, kind, entitlement, coins, duration, subscriptionGroup, level, hasIntroductoryOffer
        case introductoryOfferFreeVariant, onSale, sampleContentProvided, appleId, store
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        store = try c.decodeIfPresent(Store.self, forKey: .store) ?? .appStore
        kind = try c.decode(ProductKind.self, forKey: .kind)
        entitlement = try c.decodeIfPresent(String.self, forKey: .entitlement)
        coins = try c.decodeIfPresent(Int64.self, forKey: .coins)
        duration = try c.decodeIfPresent(CatalogDuration.self, forKey: .duration)
        subscriptionGroup = try c.decodeIfPresent(String.self, forKey: .subscriptionGroup)
        level = try c.decodeIfPresent(Int.self, forKey: .level)
        hasIntroductoryOffer = try c.decodeIfPresent(Bool.self, forKey: .hasIntroductoryOffer) ?? false
        introductoryOfferFreeVariant = try c.decodeIfPresent(String.self, forKey: .introductoryOfferFreeVariant)
        onSale = try c.decodeIfPresent(Bool.self, forKey: .onSale) ?? true
        sampleContentProvided = try c.decodeIfPresent(Bool.self, forKey: .sampleContentProvided) ?? false
        appleId = try c.decodeIfPresent(Int64.self, forKey: .appleId)
    }

    /// The most coins one unit of a consumable may credit.
    public static let maximumCoins: Int64 = 1_000_000_000

    /// Why this definition cannot be used, or `nil` when it is complete for its kind.
    public var problem: String? {
        if id.isEmpty || id.utf8.count > 200 || id.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            return "product id must be 1-200 bytes without control characters"
        }
        if let entitlement, entitlement.utf8.count > 200 || entitlement.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            return "entitlement of \(id) must be at most 200 bytes without control characters"
        }
        if let level, !(1...1000).contains(level) { return "level of \(id) must be 1-1000" }
        if let group = subscriptionGroup, group.utf8.count > 200 || group.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            return "subscriptionGroup of \(id) must be at most 200 bytes without control characters"
        }
        if let coins, !(1...Self.maximumCoins).contains(coins) {
            return "coins of \(id) must be 1-\(Self.maximumCoins)"
        }
        if let appleId, !(1...999_999_999_999).contains(appleId) { return "appleId of \(id) must be App Store Connect's Apple ID (1-12 digits)" }
        switch kind {
        case .consumable:
            guard coins != nil else { return "consumable \(id) needs positive coins" }
        case .nonConsumable:
            if entitlement?.isEmpty ?? true { return "non-consumable \(id) needs an entitlement" }
        case .nonRenewing:
            if entitlement?.isEmpty ?? true { return "non-renewing \(id) needs an entitlement" }
            if duration == nil { return "non-renewing \(id) needs a duration" }
        case .autoRenewable:
            if entitlement?.isEmpty ?? true { return "auto-renewable \(id) needs an entitlement" }
            if subscriptionGroup?.isEmpty ?? true { return "auto-renewable \(id) needs a subscriptionGroup" }
        }
        return nil
    }
}
