import Foundation

/// Renewal state of one auto-renewable subscription in a legacy receipt (`pending_renewal_info[]`).
public struct LegacyPendingRenewalInfo: Codable, Hashable, Sendable {
    /// Product the subscription renews to at the next billing date.
    public var autoRenewProductId: String?
    /// `"1"` will renew, `"0"` auto-renew turned off.
    public var autoRenewStatus: String?
    /// Why it expired: `1` cancelled, `2` billing error, `3` declined price increase,
    /// `4` product unavailable, `5` other.
    public var expirationIntent: String?
    /// When the billing grace period ends, as `yyyy-MM-dd HH:mm:ss Etc/GMT`.
    public var gracePeriodExpiresDate: String?
    /// When the billing grace period ends, epoch milliseconds as sent (see ``gracePeriodExpiresDateMs``).
    public var rawGracePeriodExpiresDateMs: String?
    /// When the billing grace period ends, in Pacific time (`America/Los_Angeles`).
    public var gracePeriodExpiresDatePst: String?
    /// `"1"` Apple is still retrying billing, `"0"` it stopped.
    public var isInBillingRetryPeriod: String?
    /// Reference name of the offer code applied to the next renewal.
    public var offerCodeRefName: String?
    /// Original transaction identifier of the subscription.
    public var originalTransactionId: String?
    /// `"0"` price increase not yet consented, `"1"` consented.
    public var priceConsentStatus: String?
    /// `"0"` consent pending, `"1"` consented or notified without consent being needed.
    public var priceIncreaseStatus: String?
    /// Product the customer currently subscribes to.
    public var productId: String?
    /// Promotional offer applied to the next renewal.
    public var promotionalOfferId: String?

    enum CodingKeys: String, CodingKey {
        case autoRenewProductId = "auto_renew_product_id"
        case autoRenewStatus = "auto_renew_status"
        case expirationIntent = "expiration_intent"
        case gracePeriodExpiresDate = "grace_period_expires_date"
        case rawGracePeriodExpiresDateMs = "grace_period_expires_date_ms"
        case gracePeriodExpiresDatePst = "grace_period_expires_date_pst"
        case isInBillingRetryPeriod = "is_in_billing_retry_period"
        case offerCodeRefName = "offer_code_ref_name"
        case originalTransactionId = "original_transaction_id"
        case priceConsentStatus = "price_consent_status"
        case priceIncreaseStatus = "price_increase_status"
        case productId = "product_id"
        case promotionalOfferId = "promotional_offer_id"
    }

    public init(
        autoRenewProductId: String? = nil,
        autoRenewStatus: String? = nil,
        expirationIntent: String? = nil,
        gracePeriodExpiresDate: String? = nil,
        rawGracePeriodExpiresDateMs: String? = nil,
        gracePeriodExpiresDatePst: String? = nil,
        isInBillingRetryPeriod: String? = nil,
        offerCodeRefName: String? = nil,
        originalTransactionId: String? = nil,
        priceConsentStatus: String? = nil,
        priceIncreaseStatus: String? = nil,
        productId: String? = nil,
        promotionalOfferId: String? = nil
    ) {
        self.autoRenewProductId = autoRenewProductId
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.rawGracePeriodExpiresDateMs = rawGracePeriodExpiresDateMs
        self.gracePeriodExpiresDatePst = gracePeriodExpiresDatePst
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.offerCodeRefName = offerCodeRefName
        self.originalTransactionId = originalTransactionId
        self.priceConsentStatus = priceConsentStatus
        self.priceIncreaseStatus = priceIncreaseStatus
        self.productId = productId
        self.promotionalOfferId = promotionalOfferId
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        autoRenewProductId = try container.decodeLegacyString(.autoRenewProductId)
        autoRenewStatus = try container.decodeLegacyString(.autoRenewStatus)
        expirationIntent = try container.decodeLegacyString(.expirationIntent)
        gracePeriodExpiresDate = try container.decodeLegacyString(.gracePeriodExpiresDate)
        rawGracePeriodExpiresDateMs = try container.decodeLegacyString(.rawGracePeriodExpiresDateMs)
        gracePeriodExpiresDatePst = try container.decodeLegacyString(.gracePeriodExpiresDatePst)
        isInBillingRetryPeriod = try container.decodeLegacyString(.isInBillingRetryPeriod)
        offerCodeRefName = try container.decodeLegacyString(.offerCodeRefName)
        originalTransactionId = try container.decodeLegacyString(.originalTransactionId)
        priceConsentStatus = try container.decodeLegacyString(.priceConsentStatus)
        priceIncreaseStatus = try container.decodeLegacyString(.priceIncreaseStatus)
        productId = try container.decodeLegacyString(.productId)
        promotionalOfferId = try container.decodeLegacyString(.promotionalOfferId)
    }

    // MARK: Typed accessors

    /// ``autoRenewStatus`` as a Boolean (`true` = will renew).
    public var autoRenewStatusValue: Bool? { LegacyValue.bool(autoRenewStatus) }
    /// ``expirationIntent`` as a number.
    public var expirationIntentValue: Int? { LegacyValue.int(expirationIntent) }
    /// ``gracePeriodExpiresDate`` in epoch milliseconds.
    public var gracePeriodExpiresDateMs: Int64? { LegacyValue.int64(rawGracePeriodExpiresDateMs) }
    /// ``gracePeriodExpiresDate`` as a `Date`.
    public var gracePeriodExpiresDateValue: Date? { LegacyValue.date(ms: rawGracePeriodExpiresDateMs) }
    /// ``isInBillingRetryPeriod`` as a Boolean.
    public var isInBillingRetryPeriodValue: Bool? { LegacyValue.bool(isInBillingRetryPeriod) }
    /// ``priceConsentStatus`` as a number.
    public var priceConsentStatusValue: Int? { LegacyValue.int(priceConsentStatus) }
    /// ``priceIncreaseStatus`` as a number.
    public var priceIncreaseStatusValue: Int? { LegacyValue.int(priceIncreaseStatus) }
}
