/// What kind of offer priced a subscription period. Stored by its number (the App Store's `offerType` numbering);
/// a number Storekeeper does not know yet is kept as it is, never dropped.
public struct OfferKind: RawRepresentable, Sendable, Hashable, Codable {
    public let rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }

    /// A free trial or introductory price for new subscribers.
    public static let introductory = OfferKind(rawValue: 1)
    /// A promotional offer the app signs for existing or lapsed subscribers.
    public static let promotional = OfferKind(rawValue: 2)
    /// An offer code (subscription or one-time purchase).
    public static let code = OfferKind(rawValue: 3)
    /// A win-back offer for lapsed subscribers.
    public static let winBack = OfferKind(rawValue: 4)
    /// A retention offer shown when a subscriber is about to cancel.
    public static let retention = OfferKind(rawValue: 5)
}
