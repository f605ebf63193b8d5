import Foundation

/// The JSON body of an App Store Server Notification V1 (deprecated June 2023).
public struct ResponseBodyV1: Codable, Hashable, Sendable {
    /// The event that triggered the notification.
    public var notificationType: NotificationTypeV1?
    /// `Sandbox` or `PROD` (not `Production`); see ``appStoreEnvironment``.
    public var environment: String?
    /// Your app-specific shared secret, echoed so you can check the sender. Redacted from descriptions.
    public var password: String?
    /// The app's bundle identifier.
    public var bid: String?
    /// The app's bundle version.
    public var bvrs: String?
    /// `"true"` / `"false"` (unlike the receipt's `"1"`/`"0"`).
    public var autoRenewStatus: String?
    /// When auto-renew was turned on or off, as `yyyy-MM-dd HH:mm:ss Etc/GMT`.
    public var autoRenewStatusChangeDate: String?
    /// When auto-renew was turned on or off, epoch milliseconds as sent (see ``autoRenewStatusChangeDateMs``).
    public var rawAutoRenewStatusChangeDateMs: String?
    /// When auto-renew was turned on or off, in Pacific time (`America/Los_Angeles`).
    public var autoRenewStatusChangeDatePst: String?
    /// Product the subscription renews to.
    public var autoRenewProductId: String?
    /// Apple ID of the product the subscription renews to.
    public var autoRenewAdamId: String?
    /// Why the subscription expired (a JSON number here, unlike in receipts).
    public var expirationIntent: Int64?
    /// Original transaction identifier of the subscription.
    public var originalTransactionId: String?
    /// When Apple stops sending this notification version, if announced.
    public var deprecation: String?
    /// The latest receipt data for the subscription.
    public var unifiedReceipt: UnifiedReceipt?

    enum CodingKeys: String, CodingKey {
        case notificationType = "notification_type"
        case environment
        case password
        case bid
        case bvrs
        case autoRenewStatus = "auto_renew_status"
        case autoRenewStatusChangeDate = "auto_renew_status_change_date"
        case rawAutoRenewStatusChangeDateMs = "auto_renew_status_change_date_ms"
        case autoRenewStatusChangeDatePst = "auto_renew_status_change_date_pst"
        case autoRenewProductId = "auto_renew_product_id"
        case autoRenewAdamId = "auto_renew_adam_id"
        case expirationIntent = "expiration_intent"
        case originalTransactionId = "original_transaction_id"
        case deprecation
        case unifiedReceipt = "unified_receipt"
    }

    public init(
        notificationType: NotificationTypeV1? = nil,
        environment: String? = nil,
        password: String? = nil,
        bid: String? = nil,
        bvrs: String? = nil,
        autoRenewStatus: String? = nil,
        autoRenewStatusChangeDate: String? = nil,
        rawAutoRenewStatusChangeDateMs: String? = nil,
        autoRenewStatusChangeDatePst: String? = nil,
        autoRenewProductId: String? = nil,
        autoRenewAdamId: String? = nil,
        expirationIntent: Int64? = nil,
        originalTransactionId: String? = nil,
        deprecation: String? = nil,
        unifiedReceipt: UnifiedReceipt? = nil
    ) {
        self.notificationType = notificationType
        self.environment = environment
        self.password = password
        self.bid = bid
        self.bvrs = bvrs
        self.autoRenewStatus = autoRenewStatus
        self.autoRenewStatusChangeDate = autoRenewStatusChangeDate
        self.rawAutoRenewStatusChangeDateMs = rawAutoRenewStatusChangeDateMs
        self.autoRenewStatusChangeDatePst = autoRenewStatusChangeDatePst
        self.autoRenewProductId = autoRenewProductId
        self.autoRenewAdamId = autoRenewAdamId
        self.expirationIntent = expirationIntent
        self.originalTransactionId = originalTransactionId
        self.deprecation = deprecation
        self.unifiedReceipt = unifiedReceipt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        notificationType = try container.decodeIfPresent(NotificationTypeV1.self, forKey: .notificationType)
        environment = try container.decodeLegacyString(.environment)
        password = try container.decodeLegacyString(.password)
        bid = try container.decodeLegacyString(.bid)
        bvrs = try container.decodeLegacyString(.bvrs)
        autoRenewStatus = try container.decodeLegacyString(.autoRenewStatus)
        autoRenewStatusChangeDate = try container.decodeLegacyString(.autoRenewStatusChangeDate)
        rawAutoRenewStatusChangeDateMs = try container.decodeLegacyString(.rawAutoRenewStatusChangeDateMs)
        autoRenewStatusChangeDatePst = try container.decodeLegacyString(.autoRenewStatusChangeDatePst)
        autoRenewProductId = try container.decodeLegacyString(.autoRenewProductId)
        autoRenewAdamId = try container.decodeLegacyString(.autoRenewAdamId)
        expirationIntent = try container.decodeLegacyInt64(.expirationIntent)
        originalTransactionId = try container.decodeLegacyString(.originalTransactionId)
        deprecation = try container.decodeLegacyString(.deprecation)
        unifiedReceipt = try container.decodeIfPresent(UnifiedReceipt.self, forKey: .unifiedReceipt)
    }

    // MARK: Typed accessors

    /// ``environment`` mapped onto ``AppStoreEnvironment`` (`PROD` → `.production`).
    public var appStoreEnvironment: AppStoreEnvironment? {
        switch environment {
        case nil: nil
        case "PROD": .production
        case .some(let other): AppStoreEnvironment(rawValue: other)
        }
    }
    /// ``autoRenewStatus`` as a Boolean.
    public var autoRenewStatusValue: Bool? { LegacyValue.bool(autoRenewStatus) }
    /// ``autoRenewStatusChangeDate`` in epoch milliseconds.
    public var autoRenewStatusChangeDateMs: Int64? { LegacyValue.int64(rawAutoRenewStatusChangeDateMs) }
    /// ``autoRenewStatusChangeDate`` as a `Date`.
    public var autoRenewStatusChangeDateValue: Date? { LegacyValue.date(ms: rawAutoRenewStatusChangeDateMs) }
}

extension ResponseBodyV1: CustomStringConvertible, CustomDebugStringConvertible {
    // The body echoes the shared secret; keep it out of logs.
    public var description: String {
        "ResponseBodyV1(notificationType: \(notificationType?.rawValue ?? "nil"), "
            + "environment: \(environment ?? "nil"), "
            + "bid: \(bid ?? "nil"), originalTransactionId: \(originalTransactionId ?? "nil"), password: <redacted>)"
    }
    public var debugDescription: String { description }
}
