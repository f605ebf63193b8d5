/// The age of the customer's account (``ConsumptionRequestV1``).
public struct AccountTenure: OpenIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let undeclared: Self = 0
    public static let zeroToThreeDays: Self = 1
    public static let threeDaysToTenDays: Self = 2
    public static let tenDaysToThirtyDays: Self = 3
    public static let thirtyDaysToNinetyDays: Self = 4
    public static let ninetyDaysToOneHundredEightyDays: Self = 5
    public static let oneHundredEightyDaysToThreeHundredSixtyFiveDays: Self = 6
    public static let greaterThanThreeHundredSixtyFiveDays: Self = 7

    public static let knownValues: [Self] = [
        .undeclared, .zeroToThreeDays, .threeDaysToTenDays, .tenDaysToThirtyDays, .thirtyDaysToNinetyDays,
        .ninetyDaysToOneHundredEightyDays, .oneHundredEightyDaysToThreeHundredSixtyFiveDays,
        .greaterThanThreeHundredSixtyFiveDays,
    ]
}
