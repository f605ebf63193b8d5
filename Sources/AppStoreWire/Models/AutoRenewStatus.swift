/// Whether an auto-renewable subscription renews at the end of its period (`autoRenewStatus`).
public struct AutoRenewStatus: OpenIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Automatic renewal is turned off.
    public static let off: Self = 0
    /// Automatic renewal is turned on.
    public static let on: Self = 1

    public static let knownValues: [Self] = [.off, .on]
}
