import Foundation

/// Amounts in App Store Connect reports (`6.99`, `-0.7`, `1234`) as milliunits of their currency, the unit signed
/// transactions use for `price`: exact, bounded, never through floating point.
public enum ReportMoney {
    /// The largest magnitude read: a thousand billion units, far beyond any one report line.
    public static let limit: Int64 = 1_000_000_000_000_000

    /// `text` in milliunits; digits past the third decimal are rounded half away from zero. Nil for anything else.
    public static func milliunits(_ text: String) -> Int64? {
        var scalars = Substring(text.trimmingCharacters(in: .whitespaces)).utf8[...]
        var negative = false
        if scalars.first == UInt8(ascii: "-") || scalars.first == UInt8(ascii: "+") {
            negative = scalars.first == UInt8(ascii: "-")
            scalars = scalars.dropFirst()
        }
        guard !scalars.isEmpty else { return nil }
        var whole: Int64 = 0
        var fraction: Int64 = 0
        var fractionDigits = 0
        var roundUp = false
        var seenPoint = false
        var digits = 0
        for byte in scalars {
            if byte == UInt8(ascii: ".") {
                guard !seenPoint else { return nil }
                seenPoint = true
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let digit = Int64(byte - UInt8(ascii: "0"))
            digits += 1
            if !seenPoint {
                let (times, o1) = whole.multipliedReportingOverflow(by: 10)
                let (plus, o2) = times.addingReportingOverflow(digit)
                guard !o1, !o2, plus <= limit / 1000 else { return nil }
                whole = plus
            } else if fractionDigits < 3 {
                fraction = fraction * 10 + digit
                fractionDigits += 1
            } else if fractionDigits == 3 {
                roundUp = digit >= 5
                fractionDigits += 1
            }
        }
        guard digits > 0 else { return nil }
        while fractionDigits < 3 {
            fraction *= 10
            fractionDigits += 1
        }
        let value = whole * 1000 + fraction + (roundUp ? 1 : 0)
        return negative ? -value : value
    }

    /// Milliunits as Apple writes amounts: two decimals (`6.99`, `-0.70`), or three when a tenth of a cent matters.
    public static func text(_ milliunits: Int64) -> String {
        let sign = milliunits < 0 ? "-" : ""
        let magnitude = milliunits.magnitude
        let whole = magnitude / 1000
        let fraction = magnitude % 1000
        if fraction % 10 == 0 {
            let cents = fraction / 10
            return "\(sign)\(whole).\(cents < 10 ? "0" : "")\(cents)"
        }
        let padded = String(fraction)
        return "\(sign)\(whole)." + String(repeating: "0", count: 3 - padded.count) + padded
    }
}
