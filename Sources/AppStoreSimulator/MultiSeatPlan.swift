import AppStoreWire
import Foundation

/// How a multiseat subscription is sold (API 1.23): who invites the group's members, and the per-seat price from each
/// seat number on (seats 1–5 at 9.99, from the 6th at 7.14: `[{fromSeat: 1, price: 9990}, {fromSeat: 6, price: 7140}]`).
public struct MultiSeatPlan: Codable, Sendable, Hashable {
    public struct Tier: Codable, Sendable, Hashable {
        public var fromSeat: Int
        public var price: Int64

        public init(fromSeat: Int, price: Int64) {
            self.fromSeat = fromSeat
            self.price = price
        }
    }

    /// Apple's bound here: a seat count the simulator sells at most.
    public static let maximumSeats = 1_000

    /// `APPLE` or `DEVELOPER`.
    public var invitationManagement: String
    public var tiers: [Tier]
    /// The most seats one purchase may have (100 when absent).
    public var maximumSeats: Int?

    public init(invitationManagement: String, tiers: [Tier], maximumSeats: Int? = nil) {
        self.invitationManagement = invitationManagement
        self.tiers = tiers
        self.maximumSeats = maximumSeats
    }

    /// The price tiers Apple reports for `seats` seats: how many seats fall in each tier, at its price.
    public func priceTiers(seats: Int) -> [MultiSeatPriceTier] {
        var result: [MultiSeatPriceTier] = []
        for (index, tier) in tiers.enumerated() where tier.fromSeat <= seats {
            let last = index + 1 < tiers.count ? min(seats, tiers[index + 1].fromSeat - 1) : seats
            result.append(MultiSeatPriceTier(tierPrice: tier.price, tierQuantity: Int32(last - tier.fromSeat + 1)))
        }
        return result
    }

    /// What `seats` seats cost together, in milliunits.
    public func totalPrice(seats: Int) -> Int64 {
        priceTiers(seats: seats).reduce(0) { $0 + ($1.tierPrice ?? 0) * Int64($1.tierQuantity ?? 0) }
    }
}
