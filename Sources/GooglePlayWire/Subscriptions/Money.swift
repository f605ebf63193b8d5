/// Google's `Money`: `units` (an int64 string) and `nanos` (billionths, same sign as `units`) of `currencyCode`.
public struct Money: Codable, Sendable, Hashable {
    public var currencyCode: String?
    public var units: PlayInt64?
    public var nanos: Int32?

    public init(currencyCode: String?, units: Int64?, nanos: Int32? = nil) {
        self.currencyCode = currencyCode
        self.units = units.map { PlayInt64($0) }
        self.nanos = nanos
    }

    /// The amount in milliunits (€9.99 → 9990), the unit Storekeeper keeps money in; nil when it does not fit or
    /// `nanos` is out of Google's range or of a different sign.
    public var milliunits: Int64? {
        let units = units?.value ?? 0
        let nanos = Int64(nanos ?? 0)
        guard abs(nanos) < 1_000_000_000, units == 0 || nanos == 0 || (units < 0) == (nanos < 0) else { return nil }
        let (scaled, overflow) = units.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return nil }
        let (total, overflowed) = scaled.addingReportingOverflow(nanos / 1_000_000)
        return overflowed ? nil : total
    }

    /// Money from milliunits.
    public init(currencyCode: String, milliunits: Int64) {
        self.currencyCode = currencyCode
        units = PlayInt64(milliunits / 1000)
        let nanos = Int32(milliunits % 1000) * 1_000_000
        self.nanos = nanos == 0 ? nil : nanos
    }
}
