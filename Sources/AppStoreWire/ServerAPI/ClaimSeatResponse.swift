import Foundation

/// Claim Seat's answer: the claim's id (a new one for every claim, a reassignment too).
public struct ClaimSeatResponse: Codable, Hashable, Sendable {
    public var seatClaimId: String?

    public init(seatClaimId: String? = nil) { self.seatClaimId = seatClaimId }
}
