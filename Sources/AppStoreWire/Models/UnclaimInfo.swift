import Foundation

/// An `UNCLAIM_SEATS` notification's `unclaimInfo` (notifications 2.23): the seat claims Apple released.
public struct UnclaimInfo: Codable, Sendable, Hashable {
    public var unclaimSeatIds: [String]?

    public init(unclaimSeatIds: [String]? = nil) { self.unclaimSeatIds = unclaimSeatIds }
}
