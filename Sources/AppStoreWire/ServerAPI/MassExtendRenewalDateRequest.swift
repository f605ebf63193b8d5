/// The body of Extend Renewal Dates for All Active Subscribers.
public struct MassExtendRenewalDateRequest: Codable, Hashable, Sendable {
    /// Your UUID for this request; sending it again returns the same request.
    public var requestIdentifier: String
    /// Days to extend by: 1–90.
    public var extendByDays: Int32
    /// Why subscriptions are extended.
    public var extendReasonCode: ExtendReasonCode
    /// The auto-renewable subscription product to extend.
    public var productId: String
    /// ISO 3166-1 alpha-3 storefronts to limit the extension to; all when nil.
    public var storefrontCountryCodes: [String]?

    public init(
        requestIdentifier: String,
        extendByDays: Int32,
        extendReasonCode: ExtendReasonCode,
        productId: String,
        storefrontCountryCodes: [String]? = nil
    ) {
        self.requestIdentifier = requestIdentifier
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.productId = productId
        self.storefrontCountryCodes = storefrontCountryCodes
    }
}
