/// The `sort` order of a transaction history request (by last-modified date).
public struct TransactionHistorySort: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let ascending: Self = "ASCENDING"
    public static let descending: Self = "DESCENDING"

    public static let knownValues: [Self] = [.ascending, .descending]
}
