import Foundation

/// One purchase in a legacy receipt: an `in_app[]` or `latest_receipt_info[]` entry.
///
/// Values are kept as the strings Apple sends (numbers and Booleans quoted); the `…Value` and `…Ms`
/// accessors parse them. Unknown keys are ignored.
public struct LegacyTransaction: Codable, Hashable, Sendable {
    /// Number of items bought (1–10), quoted.
    public var quantity: String?
    /// Product identifier.
    public var productId: String?
    /// Transaction identifier.
    public var transactionId: String?
    /// Identifier of the original purchase (the same for all renewals).
    public var originalTransactionId: String?
    /// When the App Store charged the account (the renewal date for renewals), as `yyyy-MM-dd HH:mm:ss Etc/GMT`.
    public var purchaseDate: String?
    /// When the App Store charged the account, epoch milliseconds as sent (see ``purchaseDateMs``).
    public var rawPurchaseDateMs: String?
    /// When the App Store charged the account (the renewal date for renewals), in Pacific time (`America/Los_Angeles`).
    public var purchaseDatePst: String?
    /// Date of the original purchase, as `yyyy-MM-dd HH:mm:ss Etc/GMT`.
    public var originalPurchaseDate: String?
    /// Date of the original purchase, epoch milliseconds as sent (see ``originalPurchaseDateMs``).
    public var rawOriginalPurchaseDateMs: String?
    /// Date of the original purchase, in Pacific time (`America/Los_Angeles`).
    public var originalPurchaseDatePst: String?
    /// Expiry or renewal date of an auto-renewable subscription, as `yyyy-MM-dd HH:mm:ss Etc/GMT`.
    public var expiresDate: String?
    /// Expiry or renewal date of an auto-renewable subscription, epoch milliseconds as sent (see ``expiresDateMs``).
    public var rawExpiresDateMs: String?
    /// Expiry or renewal date of an auto-renewable subscription, in Pacific time (`America/Los_Angeles`).
    public var expiresDatePst: String?
    /// When Apple customer support refunded or Family Sharing revoked the purchase, as `yyyy-MM-dd HH:mm:ss Etc/GMT`.
    public var cancellationDate: String?
    /// When the purchase was refunded or revoked, epoch milliseconds as sent (see ``cancellationDateMs``).
    public var rawCancellationDateMs: String?
    /// When the purchase was refunded or revoked, in Pacific time (`America/Los_Angeles`).
    public var cancellationDatePst: String?
    /// `"1"` = an issue in the app, `"0"` = another reason (e.g. accidental purchase).
    public var cancellationReason: String?
    /// `"true"` while in a free trial.
    public var isTrialPeriod: String?
    /// `"true"` while in an introductory-price period.
    public var isInIntroOfferPeriod: String?
    /// `"true"` on the transaction cancelled by an upgrade (latest_receipt_info only).
    public var isUpgraded: String?
    /// Identifier of the redeemed promotional offer.
    public var promotionalOfferId: String?
    /// Reference name of the redeemed offer code.
    public var offerCodeRefName: String?
    /// Primary key of subscription purchase events, including renewals.
    public var webOrderLineItemId: String?
    /// Subscription group of the product.
    public var subscriptionGroupIdentifier: String?
    /// `PURCHASED` or `FAMILY_SHARED`.
    public var inAppOwnershipType: String?
    /// The app's UUID for the customer (`appAccountToken` / `applicationUsername`).
    public var appAccountToken: String?

    enum CodingKeys: String, CodingKey {
        case quantity
        case productId = "product_id"
        case transactionId = "transaction_id"
        case originalTransactionId = "original_transaction_id"
        case purchaseDate = "purchase_date"
        case rawPurchaseDateMs = "purchase_date_ms"
        case purchaseDatePst = "purchase_date_pst"
        case originalPurchaseDate = "original_purchase_date"
        case rawOriginalPurchaseDateMs = "original_purchase_date_ms"
        case originalPurchaseDatePst = "original_purchase_date_pst"
        case expiresDate = "expires_date"
        case rawExpiresDateMs = "expires_date_ms"
        case expiresDatePst = "expires_date_pst"
        case cancellationDate = "cancellation_date"
        case rawCancellationDateMs = "cancellation_date_ms"
        case cancellationDatePst = "cancellation_date_pst"
        case cancellationReason = "cancellation_reason"
        case isTrialPeriod = "is_trial_period"
        case isInIntroOfferPeriod = "is_in_intro_offer_period"
        case isUpgraded = "is_upgraded"
        case promotionalOfferId = "promotional_offer_id"
        case offerCodeRefName = "offer_code_ref_name"
        case webOrderLineItemId = "web_order_line_item_id"
        case subscriptionGroupIdentifier = "subscription_group_identifier"
        case inAppOwnershipType = "in_app_ownership_type"
        case appAccountToken = "app_account_token"
    }

    public init(
        quantity: String? = nil,
        productId: String? = nil,
        transactionId: String? = nil,
        originalTransactionId: String? = nil,
        purchaseDate: String? = nil,
        rawPurchaseDateMs: String? = nil,
        purchaseDatePst: String? = nil,
        originalPurchaseDate: String? = nil,
        rawOriginalPurchaseDateMs: String? = nil,
        originalPurchaseDatePst: String? = nil,
        expiresDate: String? = nil,
        rawExpiresDateMs: String? = nil,
        expiresDatePst: String? = nil,
        cancellationDate: String? = nil,
        rawCancellationDateMs: String? = nil,
        cancellationDatePst: String? = nil,
        cancellationReason: String? = nil,
        isTrialPeriod: String? = nil,
        isInIntroOfferPeriod: String? = nil,
        isUpgraded: String? = nil,
        promotionalOfferId: String? = nil,
        offerCodeRefName: String? = nil,
        webOrderLineItemId: String? = nil,
        subscriptionGroupIdentifier: String? = nil,
        inAppOwnershipType: String? = nil,
        appAccountToken: String? = nil
    ) {
        self.quantity = quantity
        self.productId = productId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.purchaseDate = purchaseDate
        self.rawPurchaseDateMs = rawPurchaseDateMs
        self.purchaseDatePst = purchaseDatePst
        self.originalPurchaseDate = originalPurchaseDate
        self.rawOriginalPurchaseDateMs = rawOriginalPurchaseDateMs
        self.originalPurchaseDatePst = originalPurchaseDatePst
        self.expiresDate = expiresDate
        self.rawExpiresDateMs = rawExpiresDateMs
        self.expiresDatePst = expiresDatePst
        self.cancellationDate = cancellationDate
        self.rawCancellationDateMs = rawCancellationDateMs
        self.cancellationDatePst = cancellationDatePst
        self.cancellationReason = cancellationReason
        self.isTrialPeriod = isTrialPeriod
        self.isInIntroOfferPeriod = isInIntroOfferPeriod
        self.isUpgraded = isUpgraded
        self.promotionalOfferId = promotionalOfferId
        self.offerCodeRefName = offerCodeRefName
        self.webOrderLineItemId = webOrderLineItemId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.inAppOwnershipType = inAppOwnershipType
        self.appAccountToken = appAccountToken
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        quantity = try container.decodeLegacyString(.quantity)
        productId = try container.decodeLegacyString(.productId)
        transactionId = try container.decodeLegacyString(.transactionId)
        originalTransactionId = try container.decodeLegacyString(.originalTransactionId)
        purchaseDate = try container.decodeLegacyString(.purchaseDate)
        rawPurchaseDateMs = try container.decodeLegacyString(.rawPurchaseDateMs)
        purchaseDatePst = try container.decodeLegacyString(.purchaseDatePst)
        originalPurchaseDate = try container.decodeLegacyString(.originalPurchaseDate)
        rawOriginalPurchaseDateMs = try container.decodeLegacyString(.rawOriginalPurchaseDateMs)
        originalPurchaseDatePst = try container.decodeLegacyString(.originalPurchaseDatePst)
        expiresDate = try container.decodeLegacyString(.expiresDate)
        rawExpiresDateMs = try container.decodeLegacyString(.rawExpiresDateMs)
        expiresDatePst = try container.decodeLegacyString(.expiresDatePst)
        cancellationDate = try container.decodeLegacyString(.cancellationDate)
        rawCancellationDateMs = try container.decodeLegacyString(.rawCancellationDateMs)
        cancellationDatePst = try container.decodeLegacyString(.cancellationDatePst)
        cancellationReason = try container.decodeLegacyString(.cancellationReason)
        isTrialPeriod = try container.decodeLegacyString(.isTrialPeriod)
        isInIntroOfferPeriod = try container.decodeLegacyString(.isInIntroOfferPeriod)
        isUpgraded = try container.decodeLegacyString(.isUpgraded)
        promotionalOfferId = try container.decodeLegacyString(.promotionalOfferId)
        offerCodeRefName = try container.decodeLegacyString(.offerCodeRefName)
        webOrderLineItemId = try container.decodeLegacyString(.webOrderLineItemId)
        subscriptionGroupIdentifier = try container.decodeLegacyString(.subscriptionGroupIdentifier)
        inAppOwnershipType = try container.decodeLegacyString(.inAppOwnershipType)
        appAccountToken = try container.decodeLegacyString(.appAccountToken)
    }

    // MARK: Typed accessors (nil when absent or not parseable)

    /// ``quantity`` as a number.
    public var quantityValue: Int? { LegacyValue.int(quantity) }
    /// ``purchaseDate`` in epoch milliseconds.
    public var purchaseDateMs: Int64? { LegacyValue.int64(rawPurchaseDateMs) }
    /// ``purchaseDate`` as a `Date`.
    public var purchaseDateValue: Date? { LegacyValue.date(ms: rawPurchaseDateMs) }
    /// ``originalPurchaseDate`` in epoch milliseconds.
    public var originalPurchaseDateMs: Int64? { LegacyValue.int64(rawOriginalPurchaseDateMs) }
    /// ``originalPurchaseDate`` as a `Date`.
    public var originalPurchaseDateValue: Date? { LegacyValue.date(ms: rawOriginalPurchaseDateMs) }
    /// ``expiresDate`` in epoch milliseconds.
    public var expiresDateMs: Int64? { LegacyValue.int64(rawExpiresDateMs) }
    /// ``expiresDate`` as a `Date`.
    public var expiresDateValue: Date? { LegacyValue.date(ms: rawExpiresDateMs) }
    /// ``cancellationDate`` in epoch milliseconds.
    public var cancellationDateMs: Int64? { LegacyValue.int64(rawCancellationDateMs) }
    /// ``cancellationDate`` as a `Date`.
    public var cancellationDateValue: Date? { LegacyValue.date(ms: rawCancellationDateMs) }
    /// ``cancellationReason`` as a number (`1` app issue, `0` other).
    public var cancellationReasonValue: Int? { LegacyValue.int(cancellationReason) }
    /// ``isTrialPeriod`` as a Boolean.
    public var isTrialPeriodValue: Bool? { LegacyValue.bool(isTrialPeriod) }
    /// ``isInIntroOfferPeriod`` as a Boolean.
    public var isInIntroOfferPeriodValue: Bool? { LegacyValue.bool(isInIntroOfferPeriod) }
    /// ``isUpgraded`` as a Boolean.
    public var isUpgradedValue: Bool? { LegacyValue.bool(isUpgraded) }
    /// ``webOrderLineItemId`` as a number.
    public var webOrderLineItemIdValue: Int64? { LegacyValue.int64(webOrderLineItemId) }
    /// ``inAppOwnershipType`` as an open enum.
    public var inAppOwnershipTypeValue: InAppOwnershipType? {
        inAppOwnershipType.map(InAppOwnershipType.init(rawValue:))
    }
    /// ``appAccountToken`` as a UUID.
    public var appAccountTokenValue: UUID? { appAccountToken.flatMap(UUID.init(uuidString:)) }
    /// Whether the purchase was refunded or revoked (a cancellation date is present).
    public var isCancelled: Bool { cancellationDate != nil || rawCancellationDateMs != nil }
}
