/// Whether Look Up Order ID found a valid order.
public struct OrderLookupStatus: OpenIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let valid: Self = 0
    public static let invalid: Self = 1

    public static let knownValues: [Self] = [.valid, .invalid]
}
