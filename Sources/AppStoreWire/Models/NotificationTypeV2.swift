/// The `notificationType` of an App Store Server Notification V2.
public struct NotificationTypeV2: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let subscribed: Self = "SUBSCRIBED"
    public static let didChangeRenewalPref: Self = "DID_CHANGE_RENEWAL_PREF"
    public static let didChangeRenewalStatus: Self = "DID_CHANGE_RENEWAL_STATUS"
    public static let offerRedeemed: Self = "OFFER_REDEEMED"
    public static let didRenew: Self = "DID_RENEW"
    public static let expired: Self = "EXPIRED"
    public static let didFailToRenew: Self = "DID_FAIL_TO_RENEW"
    public static let gracePeriodExpired: Self = "GRACE_PERIOD_EXPIRED"
    public static let priceIncrease: Self = "PRICE_INCREASE"
    public static let refund: Self = "REFUND"
    public static let refundDeclined: Self = "REFUND_DECLINED"
    public static let consumptionRequest: Self = "CONSUMPTION_REQUEST"
    public static let renewalExtended: Self = "RENEWAL_EXTENDED"
    public static let revoke: Self = "REVOKE"
    public static let test: Self = "TEST"
    public static let renewalExtension: Self = "RENEWAL_EXTENSION"
    public static let refundReversed: Self = "REFUND_REVERSED"
    public static let externalPurchaseToken: Self = "EXTERNAL_PURCHASE_TOKEN"
    public static let oneTimeCharge: Self = "ONE_TIME_CHARGE"
    public static let rescindConsent: Self = "RESCIND_CONSENT"
    public static let metadataUpdate: Self = "METADATA_UPDATE"
    public static let migration: Self = "MIGRATION"
    public static let priceChange: Self = "PRICE_CHANGE"
    /// Apple unclaimed seats of a multiseat subscription whose developer manages invitations; `unclaimInfo` names
    /// them (notifications 2.23).
    public static let unclaimSeats: Self = "UNCLAIM_SEATS"

    public static let knownValues: [Self] = [
        .subscribed, .didChangeRenewalPref, .didChangeRenewalStatus, .offerRedeemed, .didRenew, .expired,
        .didFailToRenew, .gracePeriodExpired, .priceIncrease, .refund, .refundDeclined, .consumptionRequest,
        .renewalExtended, .revoke, .test, .renewalExtension, .refundReversed, .externalPurchaseToken,
        .oneTimeCharge, .rescindConsent, .metadataUpdate, .migration, .priceChange, .unclaimSeats,
    ]
}
