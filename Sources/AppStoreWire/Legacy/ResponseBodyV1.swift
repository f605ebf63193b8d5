import Crypto
import Foundation

/// The JSON body of an App Store Server Notification V1 (deprecated June 2023).
///
/// V1 content is unsigned: anyone who knows the URL can post one. Check ``isAuthentic(sharedSecret:)``,
/// then trust nothing in it until `unified_receipt.latest_receipt` has been re-verified through
/// `verifyReceipt` (``ReceiptVerificationClient``).
public struct ResponseBodyV1: Codable, Hashable, Sendable {
    /// The event that triggered the notification.
    public var notificationType: NotificationTypeV1?
    /// `Sandbox` or `PROD` (not `Production`); see ``appStoreEnvironment``.
    public var environment: String?
    /// Your app-specific shared secret, echoed so you can check the sender (``isAuthentic(sharedSecret:)``).
    /// Redacted from descriptions and mirrors, and never encoded.
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

    // Everything but `password`: a re-emitted body (stored, logged, forwarded) must not carry the secret.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(notificationType, forKey: .notificationType)
        try container.encodeIfPresent(environment, forKey: .environment)
        try container.encodeIfPresent(bid, forKey: .bid)
        try container.encodeIfPresent(bvrs, forKey: .bvrs)
        try container.encodeIfPresent(autoRenewStatus, forKey: .autoRenewStatus)
        try container.encodeIfPresent(autoRenewStatusChangeDate, forKey: .autoRenewStatusChangeDate)
        try container.encodeIfPresent(rawAutoRenewStatusChangeDateMs, forKey: .rawAutoRenewStatusChangeDateMs)
        try container.encodeIfPresent(autoRenewStatusChangeDatePst, forKey: .autoRenewStatusChangeDatePst)
        try container.encodeIfPresent(autoRenewProductId, forKey: .autoRenewProductId)
        try container.encodeIfPresent(autoRenewAdamId, forKey: .autoRenewAdamId)
        try container.encodeIfPresent(expirationIntent, forKey: .expirationIntent)
        try container.encodeIfPresent(originalTransactionId, forKey: .originalTransactionId)
        try container.encodeIfPresent(deprecation, forKey: .deprecation)
        try container.encodeIfPresent(unifiedReceipt, forKey: .unifiedReceipt)
    }

    /// Whether the echoed ``password`` is `sharedSecret`, compared in constant time.
    ///
    /// Only shows the sender knows the secret; the content still needs `verifyReceipt`.
    public func isAuthentic(sharedSecret: String) -> Bool {
        guard let password, !sharedSecret.isEmpty else { return false }
        // Comparing fixed-size digests hides the secret's length as well as where a guess first differs.
        let expected = SHA256.hash(data: Data(sharedSecret.utf8))
        let received = SHA256.hash(data: Data(password.utf8))
        var difference: UInt8 = 0
        for (lhs, rhs) in zip(expected, received) { difference |= lhs ^ rhs }
        return difference == 0
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

extension ResponseBodyV1: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    // The body echoes the shared secret; keep it out of logs, `dump` and debugger summaries.
    public var description: String {
        "ResponseBodyV1(notificationType: \(notificationType?.rawValue ?? "nil"), "
            + "environment: \(environment ?? "nil"), "
            + "bid: \(bid ?? "nil"), originalTransactionId: \(originalTransactionId ?? "nil"), password: <redacted>)"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "notificationType": notificationType as Any, "environment": environment as Any,
                "password": password == nil ? "nil" : "<redacted>", "bid": bid as Any, "bvrs": bvrs as Any,
                "autoRenewStatus": autoRenewStatus as Any,
                "autoRenewStatusChangeDate": autoRenewStatusChangeDate as Any,
                "rawAutoRenewStatusChangeDateMs": rawAutoRenewStatusChangeDateMs as Any,
                "autoRenewStatusChangeDatePst": autoRenewStatusChangeDatePst as Any,
                "autoRenewProductId": autoRenewProductId as Any, "autoRenewAdamId": autoRenewAdamId as Any,
                "expirationIntent": expirationIntent as Any, "originalTransactionId": originalTransactionId as Any,
                "deprecation": deprecation as Any, "unifiedReceipt": unifiedReceipt as Any,
            ],
            displayStyle: .struct
        )
    }
}
