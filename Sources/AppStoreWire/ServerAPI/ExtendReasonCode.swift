/// Why a subscription renewal date is extended.
public struct ExtendReasonCode: OpenIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let undeclared: Self = 0
    public static let customerSatisfaction: Self = 1
    public static let other: Self = 2
    public static let serviceIssueOrOutage: Self = 3

    public static let knownValues: [Self] = [.undeclared, .customerSatisfaction, .other, .serviceIssueOrOutage]
}
