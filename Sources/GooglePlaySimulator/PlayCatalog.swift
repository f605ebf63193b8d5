/// What the simulated Play Console sells for one app: one-time products (consumable or not) with a price.
public struct PlayCatalog: Sendable, Hashable {
    public struct Product: Sendable, Hashable {
        public enum Kind: String, Sendable, Hashable {
            /// Bought again and again; consumed once delivered.
            case consumable
            /// Bought once; acknowledged once delivered.
            case nonConsumable
        }

        public var id: String
        public var kind: Kind
        /// The price in milliunits of `currency`.
        public var price: Int64
        public var currency: String

        public init(id: String, kind: Kind, price: Int64, currency: String = "USD") {
            self.id = id
            self.kind = kind
            self.price = price
            self.currency = currency
        }
    }

    /// A subscription with one auto-renewing base plan.
    public struct Subscription: Sendable, Hashable {
        public var id: String
        public var basePlanId: String
        /// Billing period in calendar months (renewals keep the day of the month, as Google's do).
        public var months: Int
        /// The recurring price in milliunits of `currency`.
        public var price: Int64
        public var currency: String
        /// A free-trial offer's id and length in days, when the plan has one.
        public var freeTrial: (offerId: String, days: Int)?
        /// How long service continues after a declined renewal while Google retries.
        public var gracePeriodDays: Int
        /// How long the subscription is on hold (no access) after the grace period before it expires.
        public var accountHoldDays: Int
        /// A prepaid plan: paid once for its period, never renewed, extended by top-ups.
        public var prepaid: Bool

        public init(
            id: String,
            basePlanId: String,
            months: Int,
            price: Int64,
            currency: String = "USD",
            freeTrial: (offerId: String, days: Int)? = nil,
            gracePeriodDays: Int = 3,
            accountHoldDays: Int = 30,
            prepaid: Bool = false
        ) {
            self.id = id
            self.basePlanId = basePlanId
            self.months = months
            self.price = price
            self.currency = currency
            self.freeTrial = freeTrial
            self.gracePeriodDays = gracePeriodDays
            self.accountHoldDays = accountHoldDays
            self.prepaid = prepaid
        }

        public static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.id == rhs.id && lhs.basePlanId == rhs.basePlanId && lhs.months == rhs.months && lhs.price == rhs.price
                && lhs.currency == rhs.currency && lhs.freeTrial?.offerId == rhs.freeTrial?.offerId && lhs.freeTrial?.days == rhs.freeTrial?.days
                && lhs.gracePeriodDays == rhs.gracePeriodDays && lhs.accountHoldDays == rhs.accountHoldDays && lhs.prepaid == rhs.prepaid
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(id)
            hasher.combine(basePlanId)
        }
    }

    public var packageName: String
    public var products: [Product]
    public var subscriptions: [Subscription]

    public init(packageName: String, products: [Product], subscriptions: [Subscription] = []) {
        self.packageName = packageName
        self.products = products
        self.subscriptions = subscriptions
    }

    public func product(_ id: String) -> Product? { products.first { $0.id == id } }
    public func subscription(_ id: String) -> Subscription? { subscriptions.first { $0.id == id } }

    /// The catalog the demo and tests sell: coins (consumable, several per purchase), a lifetime unlock, a monthly
    /// membership with a week's free trial, a yearly one, and a month's prepaid pass.
    public static let sample = PlayCatalog(
        packageName: "com.example.storekeeper",
        products: [
            Product(id: "coins_100", kind: .consumable, price: 990),
            Product(id: "lifetime_pro", kind: .nonConsumable, price: 24_990),
        ],
        subscriptions: [
            Subscription(id: "vip_monthly", basePlanId: "monthly", months: 1, price: 4_990, freeTrial: ("trial-7d", 7)),
            Subscription(id: "vip_yearly", basePlanId: "yearly", months: 12, price: 49_990),
            Subscription(id: "vip_pass", basePlanId: "month-pass", months: 1, price: 5_990, prepaid: true),
        ]
    )
}
