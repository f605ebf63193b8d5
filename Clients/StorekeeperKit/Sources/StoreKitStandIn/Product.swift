import Foundation

/// A product for sale (`Product`), as the App Store simulator shows it to the signed-in account: localized name and
/// price in the account's storefront, and for a subscription the offers that account may take.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
public struct Product: Identifiable, Equatable, Hashable, Sendable {
    public let id: String
    public let type: Product.ProductType
    public let displayName: String
    public let description: String
    public let price: Decimal
    public let displayPrice: String
    public let isFamilyShareable: Bool
    public let subscription: Product.SubscriptionInfo?

    /// The kind of in-app purchase.
    public struct ProductType: Equatable, Hashable, Sendable {
        let rawValue: String

        public static let consumable = ProductType(rawValue: "Consumable")
        public static let nonConsumable = ProductType(rawValue: "Non-Consumable")
        public static let nonRenewable = ProductType(rawValue: "Non-Renewing Subscription")
        public static let autoRenewable = ProductType(rawValue: "Auto-Renewable Subscription")
    }

    /// What the purchase sheet ended in.
    public enum PurchaseResult: Sendable {
        case success(VerificationResult<Transaction>)
        case userCancelled
        case pending
    }

    /// The products with these identifiers that the App Store sells (unknown identifiers are left out).
    public static func products<Identifiers>(for identifiers: Identifiers) async throws -> [Product]
    where Identifiers: Collection, Identifiers.Element == String {
        let state = try SimulatedDevice.state()
        guard !identifiers.isEmpty else { return [] }
        var components = URLComponents(url: state.simulatorURL.appendingPathComponent("device/products"), resolvingAgainstBaseURL: false)!
        components.queryItems = identifiers.map { URLQueryItem(name: "ids", value: $0) } + [URLQueryItem(name: "account", value: state.account)]
        let answer: SimulatedDevice.StorefrontProducts = try await SimulatedDevice.get(components.url!)
        return answer.products.map(Product.init)
    }

    /// Shows the purchase sheet; the simulator charges the signed-in account.
    @available(visionOS, unavailable)
    @MainActor public func purchase(options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult {
        try await SimulatedDevice.purchase(self, options: options)
    }

    /// Shows the purchase sheet in `scene` (visionOS, and iOS and tvOS apps that present it near a scene).
    @available(iOS 17.0, tvOS 17.0, visionOS 1.0, *)
    @available(macOS, unavailable)
    @available(watchOS, unavailable)
    @MainActor public func purchase(confirmIn scene: some UIScene, options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult {
        try await SimulatedDevice.purchase(self, options: options)
    }

    init(_ sold: SimulatedDevice.StorefrontProduct) {
        id = sold.id
        type =
            switch sold.kind {
            case "consumable": .consumable
            case "nonConsumable": .nonConsumable
            case "nonRenewing": .nonRenewable
            default: .autoRenewable
            }
        displayName = sold.displayName
        description = sold.description
        price = Decimal(string: sold.price) ?? 0
        displayPrice = Self.format(price, currency: sold.currency)
        isFamilyShareable = sold.familyShareable
        subscription = sold.subscription.map { Product.SubscriptionInfo($0, productID: sold.id, currency: sold.currency) }
    }

    static func format(_ price: Decimal, currency: String) -> String {
        price.formatted(.currency(code: currency).locale(Locale(identifier: "en_US")))
    }
}
