/// A transaction's `advancedCommerceInfo`: details of an Advanced Commerce API purchase.
public struct AdvancedCommerceTransactionInfo: Codable, Sendable, Hashable {
    // MARK: Product

    /// The customer-facing name and description.
    public var descriptors: AdvancedCommerceDescriptors?
    /// The SKUs bought.
    public var items: [AdvancedCommerceTransactionItem]?
    /// The subscription period, for subscriptions.
    public var period: AdvancedCommercePeriod?
    /// The developer's reference for the purchase request.
    public var requestReferenceId: String?

    // MARK: Tax

    /// The estimated tax, in milliunits.
    public var estimatedTax: Int64?
    /// The tax code of the product.
    public var taxCode: String?
    /// The price before tax, in milliunits.
    public var taxExclusivePrice: Int64?
    /// The tax rate, as a decimal string (e.g. `"0.15"`).
    public var taxRate: String?

    public init(
        descriptors: AdvancedCommerceDescriptors? = nil,
        estimatedTax: Int64? = nil,
        items: [AdvancedCommerceTransactionItem]? = nil,
        period: AdvancedCommercePeriod? = nil,
        requestReferenceId: String? = nil,
        taxCode: String? = nil,
        taxExclusivePrice: Int64? = nil,
        taxRate: String? = nil
    ) {
        self.descriptors = descriptors
        self.estimatedTax = estimatedTax
        self.items = items
        self.period = period
        self.requestReferenceId = requestReferenceId
        self.taxCode = taxCode
        self.taxExclusivePrice = taxExclusivePrice
        self.taxRate = taxRate
    }
}
