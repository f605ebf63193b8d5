/// The body of Send Consumption Information (v2 endpoint, API 1.19; any product type).
///
/// Send it within 12 hours of a `CONSUMPTION_REQUEST` notification, and only with the customer's consent.
public struct ConsumptionRequest: Codable, Hashable, Sendable {
    /// Must be `true`: the customer consented to share consumption data (else 400 InvalidCustomerConsented).
    public var customerConsented: Bool
    /// Whether a free sample, trial or description of the content was given before purchase.
    public var sampleContentProvided: Bool
    /// Whether the purchase was delivered and works.
    public var deliveryStatus: DeliveryStatus
    /// Share consumed, in milliunits (0–100000); consumables, non-consumables and non-renewing only.
    /// Omit for auto-renewables (Apple computes it); must be > 0 with ``RefundPreference/grantProrated``.
    public var consumptionPercentage: Int32?
    /// Your preference for the refund decision.
    public var refundPreference: RefundPreference?

    public init(
        customerConsented: Bool,
        sampleContentProvided: Bool,
        deliveryStatus: DeliveryStatus,
        consumptionPercentage: Int32? = nil,
        refundPreference: RefundPreference? = nil
    ) {
        self.customerConsented = customerConsented
        self.sampleContentProvided = sampleContentProvided
        self.deliveryStatus = deliveryStatus
        self.consumptionPercentage = consumptionPercentage
        self.refundPreference = refundPreference
    }
}
