import Foundation

/// How much of a purchase a refund gives back: all of it, or Apple's prorated share (API 1.19: `REFUND_PRORATED`
/// with `revocationPercentage` in milliunits of a percent, 100,000 being all of it). A family revocation and a
/// refund of any other type take everything.
public struct RefundShare: Sendable, Hashable {
    /// Milliunits of a percent refunded, 0…100,000.
    public let milliPercent: Int64

    public static let full = RefundShare(milliPercent: 100_000)

    init(milliPercent: Int64) { self.milliPercent = min(max(milliPercent, 0), 100_000) }

    /// The share Apple signed: prorated only for `REFUND_PRORATED` with a percentage; a missing or out-of-range
    /// percentage is read as all (clamped), never as nothing.
    public init(revocationType: String?, revocationPercentage: Int?) {
        if revocationType == "REFUND_PRORATED", let percentage = revocationPercentage {
            self.init(milliPercent: Int64(percentage))
        } else {
            self = .full
        }
    }

    public var isFull: Bool { milliPercent >= 100_000 }

    /// "42.5 %".
    public var description: String {
        let (whole, fraction) = milliPercent.quotientAndRemainder(dividingBy: 1_000)
        guard fraction != 0 else { return "\(whole) %" }
        var decimals = String(fraction + 1_000).dropFirst()
        while decimals.hasSuffix("0") { decimals = decimals.dropLast() }
        return "\(whole).\(decimals) %"
    }

    /// The refunded share of `amount` (coins, milliunits of money), rounded half up; never overflows.
    public func of(_ amount: Int64) -> Int64 {
        guard !isFull else { return amount }
        guard amount > 0 else { return 0 }
        // Split so no product exceeds Int64: quotient × share ≤ Int64.max, remainder × share < 10¹⁰.
        let (quotient, remainder) = amount.quotientAndRemainder(dividingBy: 100_000)
        return quotient * milliPercent + (remainder * milliPercent + 50_000) / 100_000
    }

    /// Where a grant of `[start, end)` stops after this refund, decided at `date`: a full refund stops it at
    /// `date`; a prorated one keeps the unrefunded share of the period, but never takes back service already given
    /// before `date`. Nil when nothing is cut: the kept share reaches the end, or the grant has no end (an unlock
    /// partly refunded stays unlocked).
    public func cut(start: Date, end: Date?, at date: Date) -> Date? {
        guard !isFull else { return date }
        guard let end else { return nil }
        let (duration, overflow) = end.millis.subtractingReportingOverflow(start.millis)
        guard !overflow, duration > 0 else { return nil }
        let kept = duration - of(duration)
        let stop = max(start.millis + kept, date.millis)
        return stop < end.millis ? Date(millis: stop) : nil
    }
}
