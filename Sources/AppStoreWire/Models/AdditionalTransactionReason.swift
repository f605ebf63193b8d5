import Foundation

/// Why a transaction exists beyond its `transactionReason` (`additionalTransactionReason`, API 1.23).
public struct AdditionalTransactionReason: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Seats were added to a multiseat subscription during the period; every transaction of that period carries it.
    public static let seatAddition: Self = "SEAT_ADDITION"

    public static let knownValues: [Self] = [.seatAddition]
}
