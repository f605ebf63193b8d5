/// What a refund does to coins the customer already spent.
public enum CoinClawbackPolicy: String, Sendable, Hashable, Codable {
    /// Take back every refunded coin; the wallet may go negative, a debt shown in the audit and admin API.
    case debt
    /// Take back at most the balance; the rest is forgiven and reported.
    case floor

    /// How many of `refunded` coins to take back from `balance`, and how many are forgiven.
    public func clawback(refunded: Int64, balance: Int64) -> (taken: Int64, forgiven: Int64) {
        switch self {
        case .debt:
            return (refunded, 0)
        case .floor:
            let taken = min(refunded, max(0, balance))
            return (taken, refunded - taken)
        }
    }
}
