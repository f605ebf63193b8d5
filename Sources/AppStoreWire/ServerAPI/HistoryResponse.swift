/// A page of a customer's transaction history (Get Transaction History v1/v2).
public struct HistoryResponse: Codable, Hashable, Sendable {
    /// Token for the next page; with `ASCENDING` sort, store the last one to resume later.
    public var revision: String?
    /// Whether more pages follow.
    public var hasMore: Bool?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The app's Apple ID.
    public var appAppleId: Int64?
    /// The server environment the history comes from.
    public var environment: AppStoreEnvironment?
    /// Up to 20 JWS-signed transactions (`JWSTransaction`).
    public var signedTransactions: [String]?

    public init(
        revision: String? = nil,
        hasMore: Bool? = nil,
        bundleId: String? = nil,
        appAppleId: Int64? = nil,
        environment: AppStoreEnvironment? = nil,
        signedTransactions: [String]? = nil
    ) {
        self.revision = revision
        self.hasMore = hasMore
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.signedTransactions = signedTransactions
    }
}
