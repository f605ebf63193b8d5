/// What one user is sold: the products on sale, and per subscription group the packages a paywall shows them —
/// with the variant without an introductory offer for a user who already had one (seed 001) and the promotional
/// offer their variant of a running campaign grants (seed 000).
public struct CustomerCatalog: Sendable, Hashable {
    /// An offer a campaign grants the user on a package's product.
    public struct GrantedOffer: Sendable, Hashable {
        public var campaignId: String
        public var variant: String
        public var offerId: String

        public init(campaignId: String, variant: String, offerId: String) {
            self.campaignId = campaignId
            self.variant = variant
            self.offerId = offerId
        }
    }

    /// One thing to sell in a group: the catalog product it stands for, and the product to sell for it.
    public struct Package: Sendable, Hashable {
        /// The catalog product the package stands for.
        public var id: String
        /// `id`, or its variant without an introductory offer when the user already had the group's.
        public var productId: String
        public var offer: GrantedOffer?
    }

    /// A subscription group's packages, highest service (level 1) first.
    public struct Offering: Sendable, Hashable {
        public var group: String
        public var introductoryOfferEligible: Bool
        public var packages: [Package]
    }

    /// Every product on sale, in catalog order.
    public var products: [CatalogProduct]
    /// One per subscription group with something to sell, in catalog order.
    public var offerings: [Offering]
}

extension Catalog {
    /// The catalog as `userId` is sold it. `hadIntroductoryOffer` names the groups in which the user already had an
    /// introductory offer: a product with one is sold as its variant there, or left out when it has none on sale
    /// (an order for it would be refused). A product that is another's variant is only ever sold in its place.
    /// A campaign's promotional offer is listed only in groups the user has subscribed in (`subscribed`): the App
    /// Store gives promotional offers to current and lapsed subscribers only. Only `store`'s products are sold.
    public func customerCatalog(
        for userId: String,
        subscribed: Set<String>,
        hadIntroductoryOffer: Set<String>,
        store: Store = .appStore
    ) -> CustomerCatalog {
        let onSale = products.filter { $0.onSale && $0.store == store }
        let variants = Set(products.compactMap(\.introductoryOfferFreeVariant))
        var offerings: [CustomerCatalog.Offering] = []
        for group in subscriptionGroups {
            let used = hadIntroductoryOffer.contains(group)
            let members = onSale.enumerated()
                .filter { $0.element.subscriptionGroup == group && $0.element.kind == .autoRenewable && !variants.contains($0.element.id) }
                .sorted { ($0.element.level ?? Int.max, $0.offset) < ($1.element.level ?? Int.max, $1.offset) }
                .map(\.element)
            var packages: [CustomerCatalog.Package] = []
            for product in members {
                var sold = product
                if used, product.hasIntroductoryOffer {
                    guard let variant = product.introductoryOfferFreeVariant.flatMap(self.product), variant.onSale else { continue }
                    sold = variant
                }
                let offer = subscribed.contains(group) ? grantedOffer(on: sold.id, to: userId) : nil
                packages.append(.init(id: product.id, productId: sold.id, offer: offer))
            }
            if !packages.isEmpty { offerings.append(.init(group: group, introductoryOfferEligible: !used, packages: packages)) }
        }
        return CustomerCatalog(products: onSale, offerings: offerings)
    }

    /// The first running campaign on `productId` whose variant for `userId` has an offer (a control variant has none).
    func grantedOffer(on productId: String, to userId: String) -> CustomerCatalog.GrantedOffer? {
        for campaign in campaigns where campaign.active && campaign.productIds.contains(productId) {
            let variant = campaign.variant(for: userId)
            if let offerId = variant.offerId {
                return .init(campaignId: campaign.id, variant: variant.name, offerId: offerId)
            }
        }
        return nil
    }
}
