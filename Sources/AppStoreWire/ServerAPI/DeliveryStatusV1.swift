/// Whether the purchase was delivered and works (`deliveryStatus` of ``ConsumptionRequestV1``).
public struct DeliveryStatusV1: OpenIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let deliveredAndWorkingProperly: Self = 0
    public static let didNotDeliverDueToQualityIssue: Self = 1
    public static let deliveredWrongItem: Self = 2
    public static let didNotDeliverDueToServerOutage: Self = 3
    public static let didNotDeliverDueToInGameCurrencyChange: Self = 4
    public static let didNotDeliverForOtherReason: Self = 5

    public static let knownValues: [Self] = [
        .deliveredAndWorkingProperly, .didNotDeliverDueToQualityIssue, .deliveredWrongItem,
        .didNotDeliverDueToServerOutage, .didNotDeliverDueToInGameCurrencyChange, .didNotDeliverForOtherReason,
    ]
}
