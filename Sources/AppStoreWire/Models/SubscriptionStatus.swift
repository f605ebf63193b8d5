/// The status of an auto-renewable subscription (`data.status`, `lastTransactions[].status`).
public struct SubscriptionStatus: OpenIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let active: Self = 1
    public static let expired: Self = 2
    public static let billingRetry: Self = 3
    public static let billingGracePeriod: Self = 4
    public static let revoked: Self = 5

    public static let knownValues: [Self] = [.active, .expired, .billingRetry, .billingGracePeriod, .revoked]
}
