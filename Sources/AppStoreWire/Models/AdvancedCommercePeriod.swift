/// The duration of one cycle of an Advanced Commerce subscription (`period`, ISO 8601).
public struct AdvancedCommercePeriod: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// One week.
    public static let p1W: Self = "P1W"
    /// One month.
    public static let p1M: Self = "P1M"
    /// Two months.
    public static let p2M: Self = "P2M"
    /// Three months.
    public static let p3M: Self = "P3M"
    /// Six months.
    public static let p6M: Self = "P6M"
    /// One year.
    public static let p1Y: Self = "P1Y"

    public static let knownValues: [Self] = [.p1W, .p1M, .p2M, .p3M, .p6M, .p1Y]
}
