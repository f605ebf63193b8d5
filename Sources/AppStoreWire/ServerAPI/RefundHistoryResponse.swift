/// A page of refunded transactions (Get Refund History; v1 sends only `signedTransactions`).
public struct RefundHistoryResponse: Codable, Hashable, Sendable {
    /// Up to 20 (v2) or 50 (v1) JWS-signed refunded transactions.
    public var signedTransactions: [String]?
    /// Token for the next page (v2).
    public var revision: String?
    /// Whether more pages follow (v2).
    public var hasMore: Bool?

    public init(
        signedTransactions: [String]? = nil,
        revision: String? = nil,
        hasMore: Bool? = nil
    ) {
        self.signedTransactions = signedTransactions
        self.revision = revision
        self.hasMore = hasMore
    }
}
