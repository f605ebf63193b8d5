/// The JSON body POSTed to `verifyReceipt`.
public struct VerifyReceiptRequest: Codable, Hashable, Sendable {
    /// The base64 app receipt (or iOS 6-style transaction receipt).
    public var receiptData: String
    /// The app-specific shared secret; required when the receipt contains auto-renewable subscriptions.
    public var password: String?
    /// `true` to get only the latest renewal of each subscription in `latest_receipt_info`.
    public var excludeOldTransactions: Bool?

    enum CodingKeys: String, CodingKey {
        case receiptData = "receipt-data"
        case password
        case excludeOldTransactions = "exclude-old-transactions"
    }

    public init(receiptData: String, password: String? = nil, excludeOldTransactions: Bool? = nil) {
        self.receiptData = receiptData
        self.password = password
        self.excludeOldTransactions = excludeOldTransactions
    }
}

extension VerifyReceiptRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    // Receipts are customer data and the password is a secret: neither belongs in a log line, a `dump` or a
    // debugger summary.
    public var description: String {
        "VerifyReceiptRequest(receiptData: <\(receiptData.utf8.count) bytes>, "
            + "password: \(password == nil ? "nil" : "<redacted>"), "
            + "excludeOldTransactions: \(excludeOldTransactions.map(String.init) ?? "nil"))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "receiptData": "<\(receiptData.utf8.count) bytes>",
                "password": password == nil ? "nil" : "<redacted>",
                "excludeOldTransactions": excludeOldTransactions.map(String.init) ?? "nil",
            ],
            displayStyle: .struct
        )
    }
}
