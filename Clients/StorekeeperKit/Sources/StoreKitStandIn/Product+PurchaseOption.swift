import Foundation

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension Product {
    /// An option of a purchase (`Product.PurchaseOption`): the app account token, an offer.
    public struct PurchaseOption: Equatable, Hashable, Sendable {
        enum Kind: Hashable, Sendable {
            case appAccountToken(UUID)
            /// The offer as the App Store's purchase request carries it.
            case offer(SimulatedDevice.OfferRequest)
        }

        let kind: Kind

        /// The token the App Store writes into the transaction (`appAccountToken`).
        public static func appAccountToken(_ token: UUID) -> Product.PurchaseOption { PurchaseOption(kind: .appAccountToken(token)) }

        /// A promotional offer signed with the v1 signature (deprecated by Apple for the JWS one).
        @available(iOS, introduced: 15.0, deprecated: 26.0)
        @available(macOS, introduced: 12.0, deprecated: 26.0)
        @available(tvOS, introduced: 15.0, deprecated: 26.0)
        @available(watchOS, introduced: 8.0, deprecated: 26.0)
        @available(visionOS, introduced: 1.0, deprecated: 26.0)
        public static func promotionalOffer(
            offerID: String,
            keyID: String,
            nonce: UUID,
            signature: Data,
            timestamp: Int
        )
            -> Product.PurchaseOption
        {
            PurchaseOption(
                kind: .offer(
                    .init(
                        type: "promotional",
                        id: offerID,
                        signature: .init(
                            keyIdentifier: keyID,
                            nonce: nonce.uuidString.lowercased(),
                            timestamp: Int64(timestamp),
                            signature: signature.base64EncodedString()
                        )
                    )
                )
            )
        }

        /// A promotional offer signed as a JWS (Apple back-deploys it to every StoreKit 2 release: `@backDeployed(before:
        /// iOS 26.0, …)`, which only changes where the code lives).
        public static func promotionalOffer(_ offerID: String, compactJWS: String) -> [Product.PurchaseOption] {
            [PurchaseOption(kind: .offer(.init(type: "promotional", id: offerID, jws: compactJWS)))]
        }

        /// A win-back offer the customer may redeem (one of the product's `subscription.winBackOffers`).
        @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        public static func winBackOffer(_ offer: Product.SubscriptionOffer) -> Product.PurchaseOption {
            PurchaseOption(kind: .offer(.init(type: "winBack", id: offer.id ?? "")))
        }
    }
}
