/// The answer of Look Up Order ID.
public struct OrderLookupResponse: Codable, Hashable, Sendable {
    /// Whether the order ID is valid.
    public var status: OrderLookupStatus?
    /// The JWS-signed transactions of the order.
    public var signedTransactions: [String]?

    public init(
        status: OrderLookupStatus? = nil,
        signedTransactions: [String]? = nil
    ) {
        self.status = status
        self.signedTransactions = signedTransactions
    }
}
