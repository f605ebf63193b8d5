import Foundation

/// One in-app purchase entry (attribute 17) of an app receipt.
///
/// Every field is optional because Apple omits the ones that do not apply (a consumable has no expiry) and
/// StoreKit Testing in Xcode writes only a subset. Types 1707, 1713 and 1721 were never documented by Apple;
/// they are read on a best-effort basis and left `nil` when their value is not the expected ASN.1 type.
public struct AppReceiptInAppPurchase: Sendable, Hashable, Codable {
    /// 1701: the number of items purchased.
    public var quantity: Int64?
    /// 1702: the product identifier.
    public var productId: String?
    /// 1703: the transaction identifier.
    public var transactionId: String?
    /// 1705: the transaction identifier of the original purchase.
    public var originalTransactionId: String?
    /// 1704: when the App Store charged the account.
    public var purchaseDate: Date?
    /// 1706: the purchase date of the original transaction.
    public var originalPurchaseDate: Date?
    /// 1708: when an auto-renewable subscription expires.
    public var expiresDate: Date?
    /// 1711: the primary key of a subscription purchase event across devices.
    public var webOrderLineItemId: Int64?
    /// 1712: when Apple refunded or revoked the transaction.
    public var cancellationDate: Date?
    /// 1719: whether the subscription period is an introductory price period.
    public var isInIntroOfferPeriod: Bool?
    /// 1707 (undocumented): the product type number.
    public var productType: Int64?
    /// 1713 (undocumented): whether the subscription period is a free trial.
    public var isTrialPeriod: Bool?
    /// 1721 (undocumented): the identifier of the promotional offer redeemed.
    public var promotionalOfferId: String?

    /// An entry with no fields set; assign the ones you need.
    public init() {}
}
