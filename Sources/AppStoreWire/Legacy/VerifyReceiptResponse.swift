import Foundation

/// The JSON body `verifyReceipt` answers with (`responseBody`).
///
/// Apple answers HTTP 200 even for logical errors: read ``status`` (and ``disposition``) first.
public struct VerifyReceiptResponse: Codable, Hashable, Sendable {
    /// The verification result.
    public var status: VerifyReceiptStatus
    /// `Sandbox` or `Production`: where the receipt was verified.
    public var environment: AppStoreEnvironment?
    /// The decoded receipt (present when the receipt could be decoded).
    public var receipt: LegacyReceipt?
    /// The latest base64 receipt; only for receipts with auto-renewable subscriptions.
    public var latestReceipt: String?
    /// All in-app purchase transactions of the latest receipt (subscription renewals included).
    public var latestReceiptInfo: [LegacyTransaction]?
    /// Renewal state of each auto-renewable subscription.
    public var pendingRenewalInfo: [LegacyPendingRenewalInfo]?
    /// Whether a 21100–21199 status is worth retrying. Sent as `is-retryable` (or `is_retryable`).
    public var isRetryable: Bool?
    /// A free-text exception name Apple adds to some internal errors.
    public var exception: String?

    enum CodingKeys: String, CodingKey {
        case status
        case environment
        case receipt
        case latestReceipt = "latest_receipt"
        case latestReceiptInfo = "latest_receipt_info"
        case pendingRenewalInfo = "pending_renewal_info"
        case isRetryable = "is-retryable"
        case exception
    }

    // Apple's current documentation spells it with an underscore; client libraries read the hyphen.
    private enum AlternateKeys: String, CodingKey {
        case isRetryable = "is_retryable"
    }

    public init(
        status: VerifyReceiptStatus,
        environment: AppStoreEnvironment? = nil,
        receipt: LegacyReceipt? = nil,
        latestReceipt: String? = nil,
        latestReceiptInfo: [LegacyTransaction]? = nil,
        pendingRenewalInfo: [LegacyPendingRenewalInfo]? = nil,
        isRetryable: Bool? = nil,
        exception: String? = nil
    ) {
        self.status = status
        self.environment = environment
        self.receipt = receipt
        self.latestReceipt = latestReceipt
        self.latestReceiptInfo = latestReceiptInfo
        self.pendingRenewalInfo = pendingRenewalInfo
        self.isRetryable = isRetryable
        self.exception = exception
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let rawStatus = try container.decodeLegacyInt64(.status), let status = Int32(exactly: rawStatus) else {
            throw DecodingError.keyNotFound(
                CodingKeys.status,
                .init(codingPath: container.codingPath, debugDescription: "verifyReceipt response without a status")
            )
        }
        self.status = VerifyReceiptStatus(rawValue: status)
        environment = try container.decodeLegacyString(.environment).map(AppStoreEnvironment.init(rawValue:))
        receipt = try container.decodeIfPresent(LegacyReceipt.self, forKey: .receipt)
        latestReceipt = try container.decodeLegacyString(.latestReceipt)
        latestReceiptInfo = try container.decodeIfPresent([LegacyTransaction].self, forKey: .latestReceiptInfo)
        pendingRenewalInfo = try container.decodeIfPresent(
            [LegacyPendingRenewalInfo].self,
            forKey: .pendingRenewalInfo
        )
        let alternate = try decoder.container(keyedBy: AlternateKeys.self)
        isRetryable = try container.decodeLegacyBool(.isRetryable) ?? alternate.decodeLegacyBool(.isRetryable)
        exception = try container.decodeLegacyString(.exception)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status, forKey: .status)
        try container.encodeIfPresent(environment, forKey: .environment)
        try container.encodeIfPresent(receipt, forKey: .receipt)
        try container.encodeIfPresent(latestReceipt, forKey: .latestReceipt)
        try container.encodeIfPresent(latestReceiptInfo, forKey: .latestReceiptInfo)
        try container.encodeIfPresent(pendingRenewalInfo, forKey: .pendingRenewalInfo)
        try container.encodeIfPresent(isRetryable, forKey: .isRetryable)
        try container.encodeIfPresent(exception, forKey: .exception)
    }

    /// How to act on this response (``VerifyReceiptStatus/disposition(isRetryable:)``).
    public var disposition: VerifyReceiptDisposition { status.disposition(isRetryable: isRetryable) }
}
