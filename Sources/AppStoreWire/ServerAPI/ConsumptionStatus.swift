/// How much of the purchase the customer consumed (``ConsumptionRequestV1``).
public struct ConsumptionStatus: OpenIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let undeclared: Self = 0
    public static let notConsumed: Self = 1
    public static let partiallyConsumed: Self = 2
    public static let fullyConsumed: Self = 3

    public static let knownValues: [Self] = [.undeclared, .notConsumed, .partiallyConsumed, .fullyConsumed]
}
