import Foundation
import StorekeeperAPI

#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif

/// A product as a paywall shows it: what the server's catalog says it grants, joined with StoreKit's `Product` for
/// what the App Store shows this customer (localized name and price, period, offers).
public struct StoreProduct: Identifiable, Sendable, Hashable {
    /// The four kinds of in-app purchase, as the server's catalog declares them.
    public enum Kind: String, Sendable, Hashable {
        case consumable, nonConsumable, nonRenewing, autoRenewable
    }

    public var id: String { storeKitProduct.id }
    public let kind: Kind
    /// The entitlement a purchase grants (all kinds but consumables).
    public let entitlement: String?
    /// Coins one purchase credits (consumables).
    public let coins: Int64?
    /// How long a non-renewing pass lasts (ISO 8601, `P1M`).
    public let duration: String?
    /// The subscription group (auto-renewable).
    public let subscriptionGroup: String?
    /// The level in the group; 1 is the highest service.
    public let level: Int?
    /// StoreKit's product, for anything a paywall needs beyond what is lifted out here.
    public let storeKitProduct: Product
    /// Whether StoreKit will charge this customer the introductory offer (asked once per group when loaded).
    public let isEligibleForIntroOffer: Bool

    public var displayName: String { storeKitProduct.displayName }
    public var description: String { storeKitProduct.description }
    public var displayPrice: String { storeKitProduct.displayPrice }
    public var price: Decimal { storeKitProduct.price }
    /// A subscription's renewal period.
    public var subscriptionPeriod: Product.SubscriptionPeriod? { storeKitProduct.subscription?.subscriptionPeriod }
    /// The introductory offer this customer gets on purchase, or `nil` (none, or not eligible).
    public var introductoryOffer: Product.SubscriptionOffer? {
        isEligibleForIntroOffer ? storeKitProduct.subscription?.introductoryOffer : nil
    }
    /// Every promotional offer the product has in App Store Connect (which one a user may take is the server's
    /// decision: see ``Offering/Package/offer``).
    public var promotionalOffers: [Product.SubscriptionOffer] { storeKitProduct.subscription?.promotionalOffers ?? [] }

    /// The win-back offers this customer may redeem now (StoreKit decides eligibility).
    @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    public var winBackOffers: [Product.SubscriptionOffer] { storeKitProduct.subscription?.winBackOffers ?? [] }

    init(_ listed: Components.Schemas.ClientProduct, storeKitProduct: Product, introEligible: Bool) {
        kind = Kind(rawValue: listed.kind.rawValue) ?? .consumable
        entitlement = listed.entitlement
        coins = listed.coins
        duration = listed.duration
        subscriptionGroup = listed.subscriptionGroup
        level = listed.level
        self.storeKitProduct = storeKitProduct
        isEligibleForIntroOffer = introEligible
    }

    /// Whether StoreKit's product type is the kind the catalog declares.
    var storeKitTypeMatches: Bool {
        switch kind {
        case .consumable: storeKitProduct.type == .consumable
        case .nonConsumable: storeKitProduct.type == .nonConsumable
        case .nonRenewing: storeKitProduct.type == .nonRenewable
        case .autoRenewable: storeKitProduct.type == .autoRenewable
        }
    }
}
