/// The `notification_type` of an App Store Server Notification V1.
public struct NotificationTypeV1: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let initialBuy: Self = "INITIAL_BUY"
    public static let didRenew: Self = "DID_RENEW"
    public static let interactiveRenewal: Self = "INTERACTIVE_RENEWAL"
    public static let didChangeRenewalPref: Self = "DID_CHANGE_RENEWAL_PREF"
    public static let didChangeRenewalStatus: Self = "DID_CHANGE_RENEWAL_STATUS"
    public static let didFailToRenew: Self = "DID_FAIL_TO_RENEW"
    public static let didRecover: Self = "DID_RECOVER"
    public static let cancel: Self = "CANCEL"
    public static let refund: Self = "REFUND"
    public static let revoke: Self = "REVOKE"
    public static let priceIncreaseConsent: Self = "PRICE_INCREASE_CONSENT"
    public static let consumptionRequest: Self = "CONSUMPTION_REQUEST"
    /// Removed by Apple on 2021-03-10 in favour of ``didRecover``; still decodable from old logs.
    public static let renewal: Self = "RENEWAL"

    public static let knownValues: [Self] = [
        .initialBuy, .didRenew, .interactiveRenewal, .didChangeRenewalPref, .didChangeRenewalStatus,
        .didFailToRenew, .didRecover, .cancel, .refund, .revoke, .priceIncreaseConsent, .consumptionRequest,
        .renewal,
    ]
}
