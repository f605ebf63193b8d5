import Foundation

/// `purchases.subscriptionsv2.get`: a subscription purchase as Google holds it now (`androidpublisher#subscriptionPurchaseV2`).
/// A notification carries only the token; this is the state to act on.
public struct SubscriptionPurchaseV2: Codable, Sendable, Hashable {
    public var kind: String?
    /// The billing country when it was granted (ISO 3166-1 alpha-2).
    public var regionCode: String?
    /// When it was granted; absent while pending.
    public var startTime: Date?
    public var subscriptionState: SubscriptionState?
    /// One per item (the base plan and any add-ons).
    public var lineItems: [SubscriptionPurchaseLineItem]?
    /// The token this one replaced: an upgrade, a downgrade, a re-signup before expiry, a prepaid top-up or conversion.
    public var linkedPurchaseToken: String?
    public var acknowledgementState: AcknowledgementState?
    public var externalAccountIdentifiers: ExternalAccountIdentifiers?
    /// Present only for license testers' purchases.
    public var testPurchase: PlayPresence?
    public var pausedStateContext: PausedStateContext?
    public var canceledStateContext: CanceledStateContext?
    public var inGracePeriodStateContext: RenewalDeclinedContext?
    public var onHoldStateContext: RenewalDeclinedContext?
    public var outOfAppPurchaseContext: OutOfAppPurchaseContext?
    public var etag: String?
    /// Removed by Google in 2025 (replaced by each line item's `latestSuccessfulOrderId`); read from old recordings.
    public var latestOrderId: String?

    public init(
        kind: String? = "androidpublisher#subscriptionPurchaseV2",
        regionCode: String? = nil,
        startTime: Date? = nil,
        subscriptionState: SubscriptionState? = nil,
        lineItems: [SubscriptionPurchaseLineItem]? = nil,
        linkedPurchaseToken: String? = nil,
        acknowledgementState: AcknowledgementState? = nil,
        externalAccountIdentifiers: ExternalAccountIdentifiers? = nil,
        testPurchase: PlayPresence? = nil,
        pausedStateContext: PausedStateContext? = nil,
        canceledStateContext: CanceledStateContext? = nil,
        inGracePeriodStateContext: RenewalDeclinedContext? = nil,
        onHoldStateContext: RenewalDeclinedContext? = nil,
        outOfAppPurchaseContext: OutOfAppPurchaseContext? = nil,
        etag: String? = nil
    ) {
        self.kind = kind
        self.regionCode = regionCode
        self.startTime = startTime
        self.subscriptionState = subscriptionState
        self.lineItems = lineItems
        self.linkedPurchaseToken = linkedPurchaseToken
        self.acknowledgementState = acknowledgementState
        self.externalAccountIdentifiers = externalAccountIdentifiers
        self.testPurchase = testPurchase
        self.pausedStateContext = pausedStateContext
        self.canceledStateContext = canceledStateContext
        self.inGracePeriodStateContext = inGracePeriodStateContext
        self.onHoldStateContext = onHoldStateContext
        self.outOfAppPurchaseContext = outOfAppPurchaseContext
        self.etag = etag
    }

    /// A license tester's purchase: delivered, flagged, kept out of revenue.
    public var isTestPurchase: Bool { testPurchase != nil }

    /// The latest expiry of its items.
    public var expiryTime: Date? { lineItems?.compactMap(\.expiryTime).max() }
}

/// One item of a subscription purchase: its product, plan, offer and expiry.
public struct SubscriptionPurchaseLineItem: Codable, Sendable, Hashable {
    public var productId: String?
    public var expiryTime: Date?
    /// The latest successful order of this item (a renewal's order id is the first order's plus `..0`, `..1`, …).
    public var latestSuccessfulOrderId: String?
    public var autoRenewingPlan: AutoRenewingPlan?
    public var prepaidPlan: PrepaidPlan?
    public var offerDetails: OfferDetails?
    public var offerPhase: OfferPhase?
    /// This item becomes `productId` at the renewal (a deferred plan change).
    public var deferredItemReplacement: DeferredItemReplacement?
    public var deferredItemRemoval: PlayPresence?
    /// The item this one replaced (for 60 days after the purchase).
    public var itemReplacement: ItemReplacement?
    public var signupPromotion: SignupPromotion?

    public init(
        productId: String?,
        expiryTime: Date? = nil,
        latestSuccessfulOrderId: String? = nil,
        autoRenewingPlan: AutoRenewingPlan? = nil,
        prepaidPlan: PrepaidPlan? = nil,
        offerDetails: OfferDetails? = nil,
        offerPhase: OfferPhase? = nil,
        deferredItemReplacement: DeferredItemReplacement? = nil,
        deferredItemRemoval: PlayPresence? = nil,
        itemReplacement: ItemReplacement? = nil,
        signupPromotion: SignupPromotion? = nil
    ) {
        self.productId = productId
        self.expiryTime = expiryTime
        self.latestSuccessfulOrderId = latestSuccessfulOrderId
        self.autoRenewingPlan = autoRenewingPlan
        self.prepaidPlan = prepaidPlan
        self.offerDetails = offerDetails
        self.offerPhase = offerPhase
        self.deferredItemReplacement = deferredItemReplacement
        self.deferredItemRemoval = deferredItemRemoval
        self.itemReplacement = itemReplacement
        self.signupPromotion = signupPromotion
    }
}

/// An auto-renewing item's plan: whether it renews, at what price, and any price change or installments.
public struct AutoRenewingPlan: Codable, Sendable, Hashable {
    public var autoRenewEnabled: Bool?
    /// The recurring price without discounts and taxes.
    public var recurringPrice: Money?
    public var priceChangeDetails: PriceChangeDetails?
    public var installmentDetails: InstallmentDetails?
    public var priceStepUpConsentDetails: PriceStepUpConsentDetails?

    public init(
        autoRenewEnabled: Bool?,
        recurringPrice: Money? = nil,
        priceChangeDetails: PriceChangeDetails? = nil,
        installmentDetails: InstallmentDetails? = nil,
        priceStepUpConsentDetails: PriceStepUpConsentDetails? = nil
    ) {
        self.autoRenewEnabled = autoRenewEnabled
        self.recurringPrice = recurringPrice
        self.priceChangeDetails = priceChangeDetails
        self.installmentDetails = installmentDetails
        self.priceStepUpConsentDetails = priceStepUpConsentDetails
    }
}

public struct PriceChangeDetails: Codable, Sendable, Hashable {
    public var newPrice: Money?
    /// `PRICE_DECREASE`, `PRICE_INCREASE` (the user must accept), `OPT_OUT_PRICE_INCREASE`.
    public var priceChangeMode: String?
    /// `OUTSTANDING`, `CONFIRMED`, `APPLIED`, `CANCELED`.
    public var priceChangeState: String?
    public var expectedNewPriceChargeTime: Date?

    public init(newPrice: Money? = nil, priceChangeMode: String? = nil, priceChangeState: String? = nil, expectedNewPriceChargeTime: Date? = nil) {
        self.newPrice = newPrice
        self.priceChangeMode = priceChangeMode
        self.priceChangeState = priceChangeState
        self.expectedNewPriceChargeTime = expectedNewPriceChargeTime
    }
}

public struct InstallmentDetails: Codable, Sendable, Hashable {
    public var initialCommittedPaymentsCount: Int32?
    public var remainingCommittedPaymentsCount: Int32?
    public var subsequentCommittedPaymentsCount: Int32?
    public var pendingCancellation: PlayPresence?
}

public struct PriceStepUpConsentDetails: Codable, Sendable, Hashable {
    /// `CONSENT_STATE_UNSPECIFIED`, `PENDING`, `CONFIRMED`, `COMPLETED`.
    public var state: String?
    public var consentDeadlineTime: Date?
    public var newPrice: Money?
}

public struct PrepaidPlan: Codable, Sendable, Hashable {
    /// Top-ups are allowed after this time.
    public var allowExtendAfterTime: Date?

    public init(allowExtendAfterTime: Date? = nil) { self.allowExtendAfterTime = allowExtendAfterTime }
}

public struct OfferDetails: Codable, Sendable, Hashable {
    public var basePlanId: String?
    /// Only for discounted offers.
    public var offerId: String?
    public var offerTags: [String]?

    public init(basePlanId: String?, offerId: String? = nil, offerTags: [String]? = nil) {
        self.basePlanId = basePlanId
        self.offerId = offerId
        self.offerTags = offerTags
    }
}

/// Which phase of its offer the item is in; exactly one is present.
public struct OfferPhase: Codable, Sendable, Hashable {
    public var basePrice: PlayPresence?
    public var freeTrial: PlayPresence?
    public var introductoryPrice: PlayPresence?
    public var prorationPeriod: ProrationPeriod?

    public struct ProrationPeriod: Codable, Sendable, Hashable {
        /// `BASE`, `INTRODUCTORY` or `FREE_TRIAL`.
        public var originalOfferPhaseType: String?
    }

    public init(basePrice: PlayPresence? = nil, freeTrial: PlayPresence? = nil, introductoryPrice: PlayPresence? = nil) {
        self.basePrice = basePrice
        self.freeTrial = freeTrial
        self.introductoryPrice = introductoryPrice
    }
}

public struct DeferredItemReplacement: Codable, Sendable, Hashable {
    public var productId: String?
}

public struct ItemReplacement: Codable, Sendable, Hashable {
    public var productId: String?
    public var basePlanId: String?
    public var offerId: String?
    public var replacementMode: ReplacementMode?

    public init(productId: String?, basePlanId: String?, offerId: String? = nil, replacementMode: ReplacementMode?) {
        self.productId = productId
        self.basePlanId = basePlanId
        self.offerId = offerId
        self.replacementMode = replacementMode
    }
}

/// How a plan change replaced an item.
public struct ReplacementMode: PlayStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let unspecified: Self = "REPLACEMENT_MODE_UNSPECIFIED"
    public static let withTimeProration: Self = "WITH_TIME_PRORATION"
    public static let chargeProratedPrice: Self = "CHARGE_PRORATED_PRICE"
    public static let withoutProration: Self = "WITHOUT_PRORATION"
    public static let chargeFullPrice: Self = "CHARGE_FULL_PRICE"
    /// The new plan starts when the old one expires.
    public static let deferred: Self = "DEFERRED"
    public static let keepExisting: Self = "KEEP_EXISTING"

    public static let knownValues: [Self] = [
        .unspecified, .withTimeProration, .chargeProratedPrice, .withoutProration, .chargeFullPrice, .deferred, .keepExisting,
    ]
}

public struct SignupPromotion: Codable, Sendable, Hashable {
    public var oneTimeCode: PlayPresence?
    public var vanityCode: VanityCode?

    public struct VanityCode: Codable, Sendable, Hashable {
        public var promotionCode: String?

        public init(promotionCode: String?) { self.promotionCode = promotionCode }
    }

    public init(oneTimeCode: PlayPresence? = nil, vanityCode: VanityCode? = nil) {
        self.oneTimeCode = oneTimeCode
        self.vanityCode = vanityCode
    }
}

/// The ids the app passed with the purchase (`BillingFlowParams.setObfuscatedAccountId`) or account linking set.
public struct ExternalAccountIdentifiers: Codable, Sendable, Hashable {
    public var externalAccountId: String?
    public var obfuscatedExternalAccountId: String?
    public var obfuscatedExternalProfileId: String?

    public init(externalAccountId: String? = nil, obfuscatedExternalAccountId: String? = nil, obfuscatedExternalProfileId: String? = nil) {
        self.externalAccountId = externalAccountId
        self.obfuscatedExternalAccountId = obfuscatedExternalAccountId
        self.obfuscatedExternalProfileId = obfuscatedExternalProfileId
    }
}

public struct PausedStateContext: Codable, Sendable, Hashable {
    public var autoResumeTime: Date?

    public init(autoResumeTime: Date?) { self.autoResumeTime = autoResumeTime }
}

/// Why a subscription was canceled or expired: exactly one of the four is present.
public struct CanceledStateContext: Codable, Sendable, Hashable {
    public var userInitiatedCancellation: UserInitiatedCancellation?
    /// For example a billing problem.
    public var systemInitiatedCancellation: PlayPresence?
    public var developerInitiatedCancellation: PlayPresence?
    /// Replaced by a new subscription (a plan change): the new token's `linkedPurchaseToken` names this one.
    public var replacementCancellation: PlayPresence?

    public struct UserInitiatedCancellation: Codable, Sendable, Hashable {
        public var cancelSurveyResult: CancelSurveyResult?
        public var cancelTime: Date?

        public init(cancelSurveyResult: CancelSurveyResult? = nil, cancelTime: Date?) {
            self.cancelSurveyResult = cancelSurveyResult
            self.cancelTime = cancelTime
        }
    }

    public struct CancelSurveyResult: Codable, Sendable, Hashable {
        /// `CANCEL_SURVEY_REASON_NOT_ENOUGH_USAGE`, `…_TECHNICAL_ISSUES`, `…_COST_RELATED`, `…_FOUND_BETTER_APP`, `…_OTHERS`.
        public var reason: String?
        public var reasonUserInput: String?
    }

    public init(
        userInitiatedCancellation: UserInitiatedCancellation? = nil,
        systemInitiatedCancellation: PlayPresence? = nil,
        developerInitiatedCancellation: PlayPresence? = nil,
        replacementCancellation: PlayPresence? = nil
    ) {
        self.userInitiatedCancellation = userInitiatedCancellation
        self.systemInitiatedCancellation = systemInitiatedCancellation
        self.developerInitiatedCancellation = developerInitiatedCancellation
        self.replacementCancellation = replacementCancellation
    }
}

/// `inGracePeriodStateContext` / `onHoldStateContext`: the renewal order that was declined.
public struct RenewalDeclinedContext: Codable, Sendable, Hashable {
    public var renewalDeclined: RenewalDeclined?

    public init(renewalDeclined: RenewalDeclined?) { self.renewalDeclined = renewalDeclined }

    public struct RenewalDeclined: Codable, Sendable, Hashable {
        public var pendingOrderId: String?

        public init(pendingOrderId: String?) { self.pendingOrderId = pendingOrderId }
    }
}

/// A re-subscription bought in the Play subscriptions center after the last one expired (removed once acknowledged).
public struct OutOfAppPurchaseContext: Codable, Sendable, Hashable {
    public var expiredExternalAccountIdentifiers: ExternalAccountIdentifiers?
    /// Only to find the user in Storekeeper's own records.
    public var expiredPurchaseToken: String?

    public init(expiredExternalAccountIdentifiers: ExternalAccountIdentifiers? = nil, expiredPurchaseToken: String?) {
        self.expiredExternalAccountIdentifiers = expiredExternalAccountIdentifiers
        self.expiredPurchaseToken = expiredPurchaseToken
    }
}
