/// The latest transactions of one subscription group in a ``StatusResponse``.
public struct SubscriptionGroupIdentifierItem: Codable, Hashable, Sendable {
    /// The subscription group identifier.
    public var subscriptionGroupIdentifier: String?
    /// The latest transaction of each subscription in the group.
    public var lastTransactions: [LastTransactionsItem]?

    public init(
        subscriptionGroupIdentifier: String? = nil,
        lastTransactions: [LastTransactionsItem]? = nil
    ) {
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.lastTransactions = lastTransactions
    }
}
