import Foundation

/// A multiseat subscription transaction's `multiSeatInfo` (API 1.23): who manages invitations, the price tiers the
/// seats were bought at, and (on the purchaser's transaction) how many seats were refunded.
///
/// The transaction's `quantity` is its seat count and `price` the average per seat; the total paid is the sum of each
/// tier's price times its quantity.
public struct TransactionMultiSeatInfo: Codable, Sendable, Hashable {
    /// Whether Apple or the developer invites the group's members.
    public var invitationManagement: InvitationManagement?
    /// The seats bought at each price; Apple does not guarantee their order.
    public var priceTiers: [MultiSeatPriceTier]?
    /// Seats refunded from this (the purchaser's) transaction.
    public var revokedSeatQuantity: Int32?

    public init(invitationManagement: InvitationManagement? = nil, priceTiers: [MultiSeatPriceTier]? = nil, revokedSeatQuantity: Int32? = nil) {
        self.invitationManagement = invitationManagement
        self.priceTiers = priceTiers
        self.revokedSeatQuantity = revokedSeatQuantity
    }

    /// What the tiers add up to, in milliunits; nil when a tier is incomplete or the sum overflows.
    public var totalPrice: Int64? {
        guard let priceTiers, !priceTiers.isEmpty else { return nil }
        var total: Int64 = 0
        for tier in priceTiers {
            guard let price = tier.tierPrice, let quantity = tier.tierQuantity, price >= 0, quantity >= 0 else { return nil }
            let (product, overflow) = price.multipliedReportingOverflow(by: Int64(quantity))
            guard !overflow else { return nil }
            let (sum, overflowed) = total.addingReportingOverflow(product)
            guard !overflowed else { return nil }
            total = sum
        }
        return total
    }
}
