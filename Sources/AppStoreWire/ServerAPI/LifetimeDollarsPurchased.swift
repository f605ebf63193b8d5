/// Total USD the customer spent in your app, all platforms (``ConsumptionRequestV1``).
public struct LifetimeDollarsPurchased: OpenIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let undeclared: Self = 0
    public static let zeroDollars: Self = 1
    public static let oneCentToFortyNineDollarsAndNinetyNineCents: Self = 2
    public static let fiftyDollarsToNinetyNineDollarsAndNinetyNineCents: Self = 3
    public static let oneHundredDollarsToFourHundredNinetyNineDollarsAndNinetyNineCents: Self = 4
    public static let fiveHundredDollarsToNineHundredNinetyNineDollarsAndNinetyNineCents: Self = 5
    public static let oneThousandDollarsToOneThousandNineHundredNinetyNineDollarsAndNinetyNineCents: Self = 6
    public static let twoThousandDollarsOrGreater: Self = 7

    public static let knownValues: [Self] = [
        .undeclared, .zeroDollars, .oneCentToFortyNineDollarsAndNinetyNineCents,
        .fiftyDollarsToNinetyNineDollarsAndNinetyNineCents,
        .oneHundredDollarsToFourHundredNinetyNineDollarsAndNinetyNineCents,
        .fiveHundredDollarsToNineHundredNinetyNineDollarsAndNinetyNineCents,
        .oneThousandDollarsToOneThousandNineHundredNinetyNineDollarsAndNinetyNineCents, .twoThousandDollarsOrGreater,
    ]
}
