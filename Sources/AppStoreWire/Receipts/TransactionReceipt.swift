import Foundation

/// An iOS 6-style transaction receipt (`SKPaymentTransaction.transactionReceipt`): base64 of an old-style
/// property list whose `purchase-info` is itself base64 of a property list of purchase fields.
///
/// Only the transaction identifier is required; it is what the App Store Server API needs to look the
/// purchase up. The receipt's signature is Apple's private format and is not checked.
/// - Important: nothing here is signed in a way Storekeeper can check offline. Only ``transactionId`` is meant
///   to be used, as a key to ask Apple (verifyReceipt or the Server API); never credit from the other fields.
public struct TransactionReceipt: Sendable, Hashable, Codable {
    /// The default limit on the receipt text: 64 KiB, many times a real transaction receipt (~3–4 KiB).
    public static let defaultMaximumSize = 64 * 1024

    /// `transaction-id`.
    public var transactionId: String
    /// `original-transaction-id`.
    public var originalTransactionId: String?
    /// `product-id`.
    public var productId: String?
    /// `bid`: the app's bundle identifier.
    public var bundleId: String?
    /// `quantity`.
    public var quantity: Int?
    /// `purchase-date-ms`.
    public var purchaseDate: Date?
    /// `original-purchase-date-ms`.
    public var originalPurchaseDate: Date?
    /// The outer `environment` key: `Sandbox` on sandbox receipts, absent on production ones.
    public var environment: String?
    /// Every key of the decoded `purchase-info` list, as strings.
    public var purchaseInfo: [String: String]
    /// Every key of the outer list (`purchase-info`, `signature`, `environment`, `pod`, `signing-status`, …).
    public var properties: [String: String]

    /// Decodes a base64 transaction receipt as the app sends it.
    public init(
        base64Encoded text: String,
        maximumSize: Int = TransactionReceipt.defaultMaximumSize
    )
        throws(TransactionReceiptError)
    {
        guard text.utf8.count <= maximumSize else {
            throw .tooLarge(size: text.utf8.count, limit: maximumSize)
        }
        let outer = try LegacyPropertyList.dictionary(from: Self.decodeBase64(text))
        guard let purchaseInfoText = outer["purchase-info"] else {
            throw .missingField("purchase-info")
        }
        let info = try LegacyPropertyList.dictionary(from: Self.decodeBase64(purchaseInfoText))
        guard let transactionId = info["transaction-id"], !transactionId.isEmpty else {
            throw .missingField("transaction-id")
        }
        self.transactionId = transactionId
        self.originalTransactionId = info["original-transaction-id"]
        self.productId = info["product-id"]
        self.bundleId = info["bid"]
        self.quantity = info["quantity"].flatMap { Int($0) }
        self.purchaseDate = Self.date(info["purchase-date-ms"])
        self.originalPurchaseDate = Self.date(info["original-purchase-date-ms"])
        self.environment = outer["environment"]
        self.purchaseInfo = info
        self.properties = outer
    }

    private static func decodeBase64(_ text: String) throws(TransactionReceiptError) -> [UInt8] {
        let compact = text.utf8.filter { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }
        guard let data = Data(base64Encoded: Data(compact)) else {
            throw .invalidBase64
        }
        return Array(data)
    }

    private static func date(_ milliseconds: String?) -> Date? {
        guard let milliseconds, let value = Int64(milliseconds) else { return nil }
        return Date(timeIntervalSince1970: Double(value) / 1000)
    }
}
