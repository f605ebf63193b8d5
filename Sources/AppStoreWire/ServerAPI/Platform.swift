/// Where the customer consumed the purchase (``ConsumptionRequestV1``).
public struct Platform: OpenIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let undeclared: Self = 0
    public static let apple: Self = 1
    public static let nonApple: Self = 2

    public static let knownValues: [Self] = [.undeclared, .apple, .nonApple]
}
