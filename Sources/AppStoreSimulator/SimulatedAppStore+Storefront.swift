import AppStoreWire
import Foundation

/// A product as the App Store shows it to one customer (StoreKit's `Product.products(for:)`): its localized name and
/// price in the customer's storefront, and for a subscription the offers this customer may take.
public struct StorefrontProduct: Codable, Sendable, Hashable {
    public var id: String
    public var kind: SimulatorCatalog.Kind
    public var displayName: String
    public var description: String
    /// The price in the storefront's currency, as a decimal string (`"9.99"`).
    public var price: String
    /// ISO 4217 code of the storefront's currency.
    public var currency: String
    public var familyShareable: Bool
    public var subscription: Subscription?

    /// An offer with its price as a decimal string.
    public struct Offer: Codable, Sendable, Hashable {
        public var id: String
        public var discountType: OfferDiscountType
        public var period: SubscriptionPeriod
        public var periodCount: Int
        public var price: String
    }

    public struct Subscription: Codable, Sendable, Hashable {
        public var groupId: String
        public var period: SubscriptionPeriod
        public var introductoryOffer: Offer?
        /// Whether this customer may still take the group's introductory offer (none redeemed in the group).
        public var introductoryOfferEligible: Bool
        public var promotionalOffers: [Offer]
        /// The win-back offers this customer may redeem now (a lapsed subscriber of the group), best first.
        public var winBackOffers: [Offer]
    }
}

extension SimulatedAppStore {
    /// The products with these ids as `account` sees them (the catalog's first storefront when no account is
    /// given); unknown ids are left out, as StoreKit leaves them out.
    public func storefrontProducts(ids: [String], account accountId: String?) throws -> [StorefrontProduct] {
        var account: SimulatedAccount?
        if let accountId {
            guard let known = accounts[accountId] else { throw SimulatorError.unknownAccount(accountId) }
            account = known
        }
        let shown = account.map { storefront(of: $0) } ?? catalog.storefronts[0]
        var seen = Set<String>()
        return ids.compactMap { id -> StorefrontProduct? in
            guard seen.insert(id).inserted, let product = catalog.product(id) else { return nil }
            var subscription: StorefrontProduct.Subscription?
            if product.kind == .autoRenewable, let groupId = product.groupId, let period = product.period {
                subscription = .init(
                    groupId: groupId,
                    period: period,
                    introductoryOffer: product.introductoryOffer.map(Self.storefrontOffer),
                    introductoryOfferEligible: !(account?.introductoryOfferGroupsUsed.contains(groupId) ?? false),
                    promotionalOffers: (product.promotionalOffers ?? []).map(Self.storefrontOffer),
                    winBackOffers: account.map { winBackOffers(product, groupId: groupId, account: $0) } ?? []
                )
            }
            return StorefrontProduct(
                id: product.id,
                kind: product.kind,
                displayName: product.displayName ?? Self.displayName(product.id),
                description: product.description ?? "",
                price: Self.decimal(milliunits: product.price),
                currency: shown.currency,
                familyShareable: product.familyShareable ?? false,
                subscription: subscription
            )
        }
    }

    /// Of `product`'s win-back offers, those the customer may redeem: the group's subscription lapsed and the offer
    /// is among the ones Apple would show (the same rule as the renewal info's `eligibleWinBackOfferIds`).
    private func winBackOffers(_ product: SimulatorCatalog.Product, groupId: String, account: SimulatedAccount) -> [StorefrontProduct.Offer] {
        guard let offers = product.winBackOffers, !offers.isEmpty,
            let record = subscriptions.values.first(where: { $0.accountId == account.id && $0.groupId == groupId }),
            let eligible = eligibleWinBackOffers(record)
        else { return [] }
        return offers.filter { eligible.contains($0.id) }.map(Self.storefrontOffer)
    }

    static func storefrontOffer(_ offer: SimulatorCatalog.Offer) -> StorefrontProduct.Offer {
        .init(
            id: offer.id,
            discountType: offer.discountType,
            period: offer.period,
            periodCount: offer.periodCount ?? 1,
            price: decimal(milliunits: offer.price)
        )
    }

    /// `9990` → `"9.99"`; milliunits keep up to three decimals, trailing zeros beyond the second dropped.
    static func decimal(milliunits: Int64) -> String {
        let sign = milliunits < 0 ? "-" : ""
        let magnitude = milliunits.magnitude
        var fraction = String(magnitude % 1000)
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        if fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(sign)\(magnitude / 1000).\(fraction)"
    }

    /// `com.example.app.membership.monthly` → `Membership Monthly`.
    static func displayName(_ id: String) -> String {
        let parts = id.split(separator: ".")
        let tail = parts.count > 2 ? parts.suffix(2) : parts[...]
        return tail.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: " ")
    }
}
