import Foundation

/// Dates are stored as epoch milliseconds.
extension Date {
    /// Epoch milliseconds, saturated at Int64's bounds: no date, however absurd, traps the conversion.
    public var millis: Int64 {
        let value = (timeIntervalSince1970 * 1000).rounded(.down)
        guard value.isFinite else { return value.isNaN ? 0 : (value > 0 ? .max : .min) }
        if value >= 9_223_372_036_854_775_807 { return .max }
        if value <= -9_223_372_036_854_775_808 { return .min }
        return Int64(value)
    }

    public init(millis: Int64) { self.init(timeIntervalSince1970: Double(millis) / 1000) }
}
