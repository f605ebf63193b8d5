/// Why a subscription expired (`expirationIntent`).
public struct ExpirationIntent: OpenIntEnum {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The customer cancelled the subscription.
    public static let customerCancelled: Self = 1
    /// A billing error occurred.
    public static let billingError: Self = 2
    /// The customer did not consent to a price increase.
    public static let customerDidNotConsentToPriceIncrease: Self = 3
    /// The product was not available for purchase at renewal time.
    public static let productNotAvailable: Self = 4
    /// Another reason.
    public static let other: Self = 5

    public static let knownValues: [Self] = [
        .customerCancelled, .billingError, .customerDidNotConsentToPriceIncrease, .productNotAvailable, .other,
    ]
}
