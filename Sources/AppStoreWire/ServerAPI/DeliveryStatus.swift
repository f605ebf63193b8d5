/// Whether the purchase was delivered and works (`deliveryStatus` of the v2 ``ConsumptionRequest``).
public struct DeliveryStatus: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let delivered: Self = "DELIVERED"
    public static let undeliveredQualityIssue: Self = "UNDELIVERED_QUALITY_ISSUE"
    public static let undeliveredWrongItem: Self = "UNDELIVERED_WRONG_ITEM"
    public static let undeliveredServerOutage: Self = "UNDELIVERED_SERVER_OUTAGE"
    public static let undeliveredOther: Self = "UNDELIVERED_OTHER"

    public static let knownValues: [Self] = [
        .delivered, .undeliveredQualityIssue, .undeliveredWrongItem, .undeliveredServerOutage, .undeliveredOther,
    ]
}
