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

    public var packageName: String
    public var products: [Product]

    public init(packageName: String, products: [Product]) {
        self.packageName = packageName
        self.products = products
    }

    public func product(_ id: String) -> Product? { products.first { $0.id == id } }

    /// The catalog the demo and tests sell: coins (consumable, several per purchase) and a lifetime unlock.
    public static let sample = PlayCatalog(
        packageName: "com.example.storekeeper",
        products: [
            Product(id: "coins_100", kind: .consumable, price: 990),
            Product(id: "lifetime_pro", kind: .nonConsumable, price: 24_990),
        ]
    )
}
