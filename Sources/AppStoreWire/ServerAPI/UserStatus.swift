/// The status of the customer's account in your app (``ConsumptionRequestV1``).
public struct UserStatus: OpenIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let undeclared: Self = 0
    public static let active: Self = 1
    public static let suspended: Self = 2
    public static let terminated: Self = 3
    public static let limitedAccess: Self = 4

    public static let knownValues: [Self] = [.undeclared, .active, .suspended, .terminated, .limitedAccess]
}
