/// How long the customer used the app (``ConsumptionRequestV1``).
public struct PlayTime: OpenIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let undeclared: Self = 0
    public static let zeroToFiveMinutes: Self = 1
    public static let fiveToSixtyMinutes: Self = 2
    public static let oneToSixHours: Self = 3
    public static let sixHoursToTwentyFourHours: Self = 4
    public static let oneDayToFourDays: Self = 5
    public static let fourDaysToSixteenDays: Self = 6
    public static let overSixteenDays: Self = 7

    public static let knownValues: [Self] = [
        .undeclared, .zeroToFiveMinutes, .fiveToSixtyMinutes, .oneToSixHours, .sixHoursToTwentyFourHours,
        .oneDayToFourDays, .fourDaysToSixteenDays, .overSixteenDays,
    ]
}
