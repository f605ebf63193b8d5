/// Whether the customer responded to a subscription price increase (`priceIncreaseStatus`).
public struct PriceIncreaseStatus: OpenIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The customer has not yet responded to a price increase that needs consent.
    public static let customerHasNotResponded: Self = 0
    /// The customer consented, or was notified of an increase that needs no consent.
    public static let customerConsentedOrWasNotifiedWithoutNeedingConsent: Self = 1

    public static let knownValues: [Self] = [
        .customerHasNotResponded, .customerConsentedOrWasNotifiedWithoutNeedingConsent,
    ]
}
