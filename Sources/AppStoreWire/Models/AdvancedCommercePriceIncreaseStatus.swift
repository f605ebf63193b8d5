/// The state of a price increase on an Advanced Commerce renewal item.
public struct AdvancedCommercePriceIncreaseStatus: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The increase is scheduled.
    public static let scheduled: Self = "SCHEDULED"
    /// The increase awaits the customer's consent.
    public static let pending: Self = "PENDING"
    /// The customer accepted, or no consent was needed.
    public static let accepted: Self = "ACCEPTED"

    public static let knownValues: [Self] = [.scheduled, .pending, .accepted]
}
