import Foundation

/// The `unified_receipt` of a V1 notification: the latest receipt data, as in a `verifyReceipt` response.
public struct UnifiedReceipt: Codable, Hashable, Sendable {
    /// `Sandbox` or `Production`.
    public var environment: AppStoreEnvironment?
    /// The latest base64 receipt.
    public var latestReceipt: String?
    /// The latest transactions (at most 100).
    public var latestReceiptInfo: [LegacyTransaction]?
    /// Renewal state of each auto-renewable subscription.
    public var pendingRenewalInfo: [LegacyPendingRenewalInfo]?
    /// `0` when the receipt is valid.
    public var status: Int64?

    enum CodingKeys: String, CodingKey {
        case environment
        case latestReceipt = "latest_receipt"
        case latestReceiptInfo = "latest_receipt_info"
        case pendingRenewalInfo = "pending_renewal_info"
        case status
    }

    public init(
        environment: AppStoreEnvironment? = nil,
        latestReceipt: String? = nil,
        latestReceiptInfo: [LegacyTransaction]? = nil,
        pendingRenewalInfo: [LegacyPendingRenewalInfo]? = nil,
        status: Int64? = nil
    ) {
        self.environment = environment
        self.latestReceipt = latestReceipt
        self.latestReceiptInfo = latestReceiptInfo
        self.pendingRenewalInfo = pendingRenewalInfo
        self.status = status
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        environment = try container.decodeIfPresent(AppStoreEnvironment.self, forKey: .environment)
        latestReceipt = try container.decodeLegacyString(.latestReceipt)
        latestReceiptInfo = try container.decodeIfPresent([LegacyTransaction].self, forKey: .latestReceiptInfo)
        pendingRenewalInfo = try container.decodeIfPresent([LegacyPendingRenewalInfo].self, forKey: .pendingRenewalInfo)
        status = try container.decodeLegacyInt64(.status)
    }
}
