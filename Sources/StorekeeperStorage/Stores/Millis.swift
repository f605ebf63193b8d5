import Foundation

/// Dates are stored as epoch milliseconds.
extension Date {
    var millis: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }

    init(millis: Int64) { self.init(timeIntervalSince1970: Double(millis) / 1000) }
}
