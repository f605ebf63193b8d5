import Foundation

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension Product {
    /// What a subscription product is: its group, period and offers (`Product.SubscriptionInfo`).
    public struct SubscriptionInfo: Equatable, Hashable, Sendable {
        public let introductoryOffer: Product.SubscriptionOffer?
        public let promotionalOffers: [Product.SubscriptionOffer]
        public let subscriptionGroupID: String
        public let subscriptionPeriod: Product.SubscriptionPeriod
        let productID: String
        let eligibleWinBackOffers: [Product.SubscriptionOffer]
        /// The App Store's answer when the product was fetched.
        let introOfferEligibleWhenFetched: Bool

        /// The win-back offers the customer may redeem now. (Apple declares a `let`; a stored property cannot carry
        /// availability outside a resilient library, and a read-only `var` reads the same to callers.)
        @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        public var winBackOffers: [Product.SubscriptionOffer] { eligibleWinBackOffers }

        /// Whether the customer may still take the group's introductory offer (asked of the App Store now).
        public var isEligibleForIntroOffer: Bool {
            get async {
                (try? await Product.products(for: [productID]).first)?.subscription?.introOfferEligibleWhenFetched ?? false
            }
        }

        init(_ sold: SimulatedDevice.StorefrontProduct.Subscription, productID: String, currency: String) {
            self.productID = productID
            subscriptionGroupID = sold.groupId
            subscriptionPeriod = Product.SubscriptionPeriod(iso8601: sold.period) ?? .init(unit: .month, value: 1)
            introductoryOffer = sold.introductoryOffer.map { .init($0, type: .introductory, currency: currency) }
            promotionalOffers = sold.promotionalOffers.map { .init($0, type: .promotional, currency: currency) }
            eligibleWinBackOffers = sold.winBackOffers.map { .init($0, type: .winBack, currency: currency) }
            introOfferEligibleWhenFetched = sold.introductoryOfferEligible
        }
    }

    /// A subscription offer (`Product.SubscriptionOffer`).
    public struct SubscriptionOffer: Equatable, Hashable, Sendable {
        public let id: String?
        public let type: Product.SubscriptionOffer.OfferType
        public let price: Decimal
        public let displayPrice: String
        public let period: Product.SubscriptionPeriod
        public let periodCount: Int
        public let paymentMode: Product.SubscriptionOffer.PaymentMode

        /// Introductory, promotional, win-back.
        public struct OfferType: Equatable, Hashable, Sendable {
            let rawValue: String

            public static let introductory = OfferType(rawValue: "introductory")
            public static let promotional = OfferType(rawValue: "promotional")
            @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
            public static let winBack = OfferType(rawValue: "winBack")
        }

        /// How the customer pays during the offer.
        public struct PaymentMode: Equatable, Hashable, Sendable {
            let rawValue: String

            public static let freeTrial = PaymentMode(rawValue: "FreeTrial")
            public static let payAsYouGo = PaymentMode(rawValue: "PayAsYouGo")
            public static let payUpFront = PaymentMode(rawValue: "PayUpFront")
        }

        init(_ sold: SimulatedDevice.StorefrontProduct.Offer, type: OfferType, currency: String) {
            id = type == .introductory ? nil : sold.id
            self.type = type
            price = Decimal(string: sold.price) ?? 0
            displayPrice = Product.format(price, currency: currency)
            period = Product.SubscriptionPeriod(iso8601: sold.period) ?? .init(unit: .month, value: 1)
            periodCount = sold.periodCount
            paymentMode =
                switch sold.discountType {
                case "FREE_TRIAL": .freeTrial
                case "PAY_UP_FRONT": .payUpFront
                default: .payAsYouGo
                }
        }
    }

    /// A subscription's or an offer's period (`Product.SubscriptionPeriod`).
    public struct SubscriptionPeriod: Equatable, Hashable, Sendable {
        public let unit: Product.SubscriptionPeriod.Unit
        public let value: Int

        public enum Unit: Equatable, Hashable, Sendable {
            case day
            case week
            case month
            case year
        }

        init(unit: Unit, value: Int) {
            self.unit = unit
            self.value = value
        }

        /// `P1M`, `P1W`, `P3D`, `P1Y`.
        init?(iso8601 text: String) {
            guard text.count >= 3, text.first == "P", let value = Int(text.dropFirst().dropLast()), value > 0 else { return nil }
            switch text.last {
            case "D": self.init(unit: .day, value: value)
            case "W": self.init(unit: .week, value: value)
            case "M": self.init(unit: .month, value: value)
            case "Y": self.init(unit: .year, value: value)
            default: return nil
            }
        }
    }
}
