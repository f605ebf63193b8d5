/// A `productType` filter of a transaction history request.
public struct TransactionHistoryProductType: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let autoRenewable: Self = "AUTO_RENEWABLE"
    public static let nonRenewable: Self = "NON_RENEWABLE"
    public static let consumable: Self = "CONSUMABLE"
    public static let nonConsumable: Self = "NON_CONSUMABLE"

    public static let knownValues: [Self] = [.autoRenewable, .nonRenewable, .consumable, .nonConsumable]
}
