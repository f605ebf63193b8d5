/// The period of an Advanced Commerce offer (ISO 8601 duration).
public struct AdvancedCommerceOfferPeriod: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Three days.
    public static let p3D: Self = "P3D"
    /// One week.
    public static let p1W: Self = "P1W"
    /// Two weeks.
    public static let p2W: Self = "P2W"
    /// One month.
    public static let p1M: Self = "P1M"
    /// Two months.
    public static let p2M: Self = "P2M"
    /// Three months.
    public static let p3M: Self = "P3M"
    /// Six months.
    public static let p6M: Self = "P6M"
    /// Nine months.
    public static let p9M: Self = "P9M"
    /// One year.
    public static let p1Y: Self = "P1Y"

    public static let knownValues: [Self] = [.p3D, .p1W, .p2W, .p1M, .p2M, .p3M, .p6M, .p9M, .p1Y]
}
