/// Renewal info's `advancedCommerceInfo`: the next renewal of an Advanced Commerce subscription.
public struct AdvancedCommerceRenewalInfo: Codable, Sendable, Hashable {
    // MARK: Renewal

    /// A token to pass back with the next change request, so changes apply to the state seen here.
    public var consistencyToken: String?
    /// The customer-facing name and description.
    public var descriptors: AdvancedCommerceDescriptors?
    /// The SKUs that renew.
    public var items: [AdvancedCommerceRenewalItem]?
    /// The subscription period.
    public var period: AdvancedCommercePeriod?
    /// The developer's reference for the request that set up this renewal.
    public var requestReferenceId: String?
    /// The tax code of the product.
    public var taxCode: String?

    public init(
        consistencyToken: String? = nil,
        descriptors: AdvancedCommerceDescriptors? = nil,
        items: [AdvancedCommerceRenewalItem]? = nil,
        period: AdvancedCommercePeriod? = nil,
        requestReferenceId: String? = nil,
        taxCode: String? = nil
    ) {
        self.consistencyToken = consistencyToken
        self.descriptors = descriptors
        self.items = items
        self.period = period
        self.requestReferenceId = requestReferenceId
        self.taxCode = taxCode
    }
}
