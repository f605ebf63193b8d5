import Foundation

/// Google's `Order` (`orders.get`): what the buyer paid for one order — a one-time purchase, or a subscription's
/// purchase or renewal — with its tax, the developer's revenue after Google's fee, and its state. The names are
/// Google's; fields Storekeeper does not read are not modelled (and not refused).
public struct PlayOrder: Codable, Sendable, Hashable {
    public var orderId: String?
    public var purchaseToken: String?
    /// `PENDING`, `PROCESSED`, `CANCELED`, `PENDING_REFUND`, `PARTIALLY_REFUNDED`, `REFUNDED`.
    public var state: String?
    public var createTime: Date?
    public var lastEventTime: Date?
    public var lineItems: [LineItem]?
    /// What the buyer paid, tax included.
    public var total: Money?
    public var tax: Money?
    /// After Google's fee, taxes and partial refunds, in the buyer's currency.
    public var developerRevenueInBuyerCurrency: Money?
    public var buyerAddress: BuyerAddress?
    public var orderDetails: OrderDetails?
    /// `IN_APP`, `PC_EMULATOR`, `NATIVE_PC`, `PLAY_STORE`, `OUTSIDE_PLAY_STORE`.
    public var salesChannel: String?

    public init(
        orderId: String?,
        purchaseToken: String?,
        state: String?,
        createTime: Date?,
        lastEventTime: Date? = nil,
        lineItems: [LineItem]?,
        total: Money?,
        tax: Money?,
        developerRevenueInBuyerCurrency: Money?,
        buyerAddress: BuyerAddress?,
        orderDetails: OrderDetails? = nil,
        salesChannel: String? = "IN_APP"
    ) {
        self.orderId = orderId
        self.purchaseToken = purchaseToken
        self.state = state
        self.createTime = createTime
        self.lastEventTime = lastEventTime
        self.lineItems = lineItems
        self.total = total
        self.tax = tax
        self.developerRevenueInBuyerCurrency = developerRevenueInBuyerCurrency
        self.buyerAddress = buyerAddress
        self.orderDetails = orderDetails
        self.salesChannel = salesChannel
    }

    public struct LineItem: Codable, Sendable, Hashable {
        public var productId: String?
        public var productTitle: String?
        public var listingPrice: Money?
        public var total: Money?
        public var tax: Money?
        public var oneTimePurchaseDetails: OneTimePurchaseDetails?
        public var subscriptionDetails: SubscriptionDetails?

        public init(
            productId: String?,
            productTitle: String? = nil,
            listingPrice: Money?,
            total: Money?,
            tax: Money?,
            oneTimePurchaseDetails: OneTimePurchaseDetails? = nil,
            subscriptionDetails: SubscriptionDetails? = nil
        ) {
            self.productId = productId
            self.productTitle = productTitle
            self.listingPrice = listingPrice
            self.total = total
            self.tax = tax
            self.oneTimePurchaseDetails = oneTimePurchaseDetails
            self.subscriptionDetails = subscriptionDetails
        }
    }

    /// A subscription order's base plan, offer and the service period it paid for (Google's accounting snapshot).
    public struct SubscriptionDetails: Codable, Sendable, Hashable {
        public var basePlanId: String?
        public var offerId: String?
        public var servicePeriodStartTime: Date?
        public var servicePeriodEndTime: Date?

        public init(basePlanId: String?, offerId: String? = nil, servicePeriodStartTime: Date? = nil, servicePeriodEndTime: Date? = nil) {
            self.basePlanId = basePlanId
            self.offerId = offerId
            self.servicePeriodStartTime = servicePeriodStartTime
            self.servicePeriodEndTime = servicePeriodEndTime
        }
    }

    public struct OneTimePurchaseDetails: Codable, Sendable, Hashable {
        public var offerId: String?
        public var purchaseOptionId: String?
        public var quantity: Int32?

        public init(offerId: String? = nil, purchaseOptionId: String? = nil, quantity: Int32?) {
            self.offerId = offerId
            self.purchaseOptionId = purchaseOptionId
            self.quantity = quantity
        }
    }

    public struct BuyerAddress: Codable, Sendable, Hashable {
        /// ISO 3166-1 alpha-2.
        public var buyerCountry: String?
        public var buyerState: String?
        public var buyerPostcode: String?

        public init(buyerCountry: String?, buyerState: String? = nil, buyerPostcode: String? = nil) {
            self.buyerCountry = buyerCountry
            self.buyerState = buyerState
            self.buyerPostcode = buyerPostcode
        }
    }

    public struct OrderDetails: Codable, Sendable, Hashable {
        /// Whether the price the buyer saw included tax.
        public var taxInclusive: Bool?

        public init(taxInclusive: Bool?) { self.taxInclusive = taxInclusive }
    }
}
