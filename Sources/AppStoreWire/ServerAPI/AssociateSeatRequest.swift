import Foundation

/// The body of Associate Seat (`POST …/seats/{seatClaimId}/associate`): the member's app install the claimed seat
/// belongs to.
public struct AssociateSeatRequest: Codable, Hashable, Sendable {
    public var appTransactionId: String

    public init(appTransactionId: String) { self.appTransactionId = appTransactionId }
}
