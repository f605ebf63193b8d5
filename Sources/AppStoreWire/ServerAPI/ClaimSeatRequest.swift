import Foundation

/// The body of Claim Seat (`POST /groups/v1/transactions/{originalTransactionId}/seats`, API 1.23): the developer's
/// id of this claim, kept and sent again on a retry so Apple answers the same seat instead of claiming another, and
/// the member's app install when it is known.
public struct ClaimSeatRequest: Codable, Hashable, Sendable {
    public var requestIdentifier: String
    public var appTransactionId: String?

    public init(requestIdentifier: String, appTransactionId: String? = nil) {
        self.requestIdentifier = requestIdentifier
        self.appTransactionId = appTransactionId
    }
}
