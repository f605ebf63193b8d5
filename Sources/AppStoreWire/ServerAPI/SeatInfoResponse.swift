import Foundation

/// Get Seat Info's answer (`GET /groups/v1/transactions/{originalTransactionId}/seats`): the seats of the period, how
/// many are free, and the claims. Apple does not unclaim seats when a renewal lowers the count, so the claims can
/// outnumber the seats.
public struct SeatInfoResponse: Codable, Hashable, Sendable {
    public var totalSeatCount: Int32?
    public var availableSeatCount: Int32?
    public var assignedSeatClaimIds: [String]?

    public init(totalSeatCount: Int32? = nil, availableSeatCount: Int32? = nil, assignedSeatClaimIds: [String]? = nil) {
        self.totalSeatCount = totalSeatCount
        self.availableSeatCount = availableSeatCount
        self.assignedSeatClaimIds = assignedSeatClaimIds
    }
}
