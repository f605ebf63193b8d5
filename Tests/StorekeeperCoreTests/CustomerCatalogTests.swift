import StorekeeperCore
import Testing

/// `Catalog.customerCatalog(for:subscribed:hadIntroductoryOffer:)`: the packages one user is sold.
@Suite("Customer catalog")
struct CustomerCatalogTests {
    static func catalog(variantOnSale: Bool = true) -> Catalog {
        Catalog(
            products: [
                .init(id: "coins", kind: .consumable, coins: 10),
                .init(
                    id: "monthly",
                    kind: .autoRenewable,
                    entitlement: "pro",
                    subscriptionGroup: "g",
                    level: 2,
                    hasIntroductoryOffer: true,
                    introductoryOfferFreeVariant: "monthly.plain"
                ),
                .init(id: "monthly.plain", kind: .autoRenewable, entitlement: "pro", subscriptionGroup: "g", level: 2, onSale: variantOnSale),
                .init(id: "yearly", kind: .autoRenewable, entitlement: "pro", subscriptionGroup: "g", level: 1, hasIntroductoryOffer: true),
                .init(id: "old", kind: .autoRenewable, entitlement: "pro", subscriptionGroup: "g", level: 3, onSale: false),
            ],
            campaigns: [
                .init(id: "off", productIds: ["monthly"], variants: [.init(name: "all", offerId: "o-off", weight: 1)], active: false),
                .init(id: "plain", productIds: ["monthly.plain"], variants: [.init(name: "all", offerId: "o-plain", weight: 1)]),
            ]
        )
    }

    @Test("a subscriber eligible for the trial: level order, no variant package, no inactive campaign's offer")
    func eligible() {
        let sold = Self.catalog().customerCatalog(for: "u", subscribed: ["g"], hadIntroductoryOffer: [])
        #expect(sold.products.map(\.id) == ["coins", "monthly", "monthly.plain", "yearly"])
        #expect(sold.offerings.count == 1)
        #expect(sold.offerings[0].introductoryOfferEligible)
        #expect(sold.offerings[0].packages.map(\.id) == ["yearly", "monthly"])
        #expect(sold.offerings[0].packages.allSatisfy { $0.id == $0.productId && $0.offer == nil })
    }

    @Test("a user who had the trial: the variant in its place with the variant's offer; without a variant on sale, left out")
    func hadTrial() {
        let sold = Self.catalog().customerCatalog(for: "u", subscribed: ["g"], hadIntroductoryOffer: ["g"])
        #expect(!sold.offerings[0].introductoryOfferEligible)
        let monthly = sold.offerings[0].packages.first { $0.id == "monthly" }
        #expect(monthly?.productId == "monthly.plain")
        #expect(monthly?.offer == .init(campaignId: "plain", variant: "all", offerId: "o-plain"))
        #expect(sold.offerings[0].packages.map(\.id) == ["monthly"], "yearly has a trial and no variant: an order would be refused")
        let notSubscribed = Self.catalog().customerCatalog(for: "u", subscribed: [], hadIntroductoryOffer: ["g"])
        #expect(notSubscribed.offerings[0].packages.first?.offer == nil, "promotional offers are for subscribers only")
        #expect(Self.catalog(variantOnSale: false).customerCatalog(for: "u", subscribed: ["g"], hadIntroductoryOffer: ["g"]).offerings.isEmpty)
    }
}

/// Weights an admin sends are bounded before they are summed: two near Int.max once trapped the server.
@Suite struct CampaignWeightTests {
    static func catalog(_ weights: [Int]) throws -> Catalog {
        let catalog = Catalog(
            products: [CatalogProduct(id: "m", kind: .autoRenewable, entitlement: "pro", subscriptionGroup: "g", level: 1)],
            campaigns: [
                OfferCampaign(
                    id: "c",
                    productIds: ["m"],
                    variants: weights.enumerated().map { OfferCampaign.Variant(name: "v\($0.offset)", offerId: nil, weight: $0.element) }
                )
            ]
        )
        try catalog.validate()
        return catalog
    }

    @Test func weightsPastTheBoundAreRefusedNotSummed() throws {
        for weights in [[Int.max, Int.max], [Int.max / 2 + 1, Int.max / 2 + 1], [OfferCampaign.maximumWeight + 1], [-1, 5], [0, 0]] {
            #expect(throws: CatalogError.self, "\(weights)") { try Self.catalog(weights) }
        }
        #expect(throws: CatalogError.self) { try Self.catalog(Array(repeating: 1, count: OfferCampaign.maximumVariants + 1)) }
        let fine = try Self.catalog([OfferCampaign.maximumWeight, 0, 1])
        #expect(fine.campaigns.first?.variant(for: "ann").name.hasPrefix("v") == true)
    }
}
