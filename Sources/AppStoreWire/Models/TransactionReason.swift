/// Whether a transaction is a customer purchase or a system renewal (`transactionReason`).
public struct TransactionReason: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The customer initiated the purchase (including upgrades).
    public static let purchase: Self = "PURCHASE"
    /// The App Store renewed the subscription (including a downgrade taking effect).
    public static let renewal: Self = "RENEWAL"

    public static let knownValues: [Self] = [.purchase, .renewal]
}
