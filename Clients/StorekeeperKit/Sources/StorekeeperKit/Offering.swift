#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif

/// One subscription group's paywall: the packages the server sells this user, highest service first.
public struct Offering: Identifiable, Sendable, Hashable {
    /// One thing to buy: the product to sell and, when a campaign grants the user one, the offer to buy it at.
    public struct Package: Identifiable, Sendable, Hashable {
        /// A promotional offer a running campaign grants this user on the product (the server signs it at
        /// purchase).
        public struct Offer: Sendable, Hashable {
            public let campaignId: String
            /// The user's variant of the campaign (for the app's analytics).
            public let variant: String
            public let offerId: String
            /// The offer as StoreKit shows it (price, period, payment mode).
            public let storeKitOffer: Product.SubscriptionOffer
        }

        /// The catalog product the package stands for (stable across users: key a paywall's layout by it).
        public let id: String
        /// What to sell: the product itself, or — for a user who already had the group's introductory offer — its
        /// variant without one.
        public let product: StoreProduct
        public let offer: Offer?
    }

    /// The subscription group.
    public let id: String
    /// Whether this user never had an introductory offer in the group (the server's record, across Apple IDs).
    public let introductoryOfferEligible: Bool
    public let packages: [Package]
}
