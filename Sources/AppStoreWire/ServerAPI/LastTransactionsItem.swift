/// The most recent transaction and renewal info of one subscription.
public struct LastTransactionsItem: Codable, Hashable, Sendable {
    /// The subscription's status.
    public var status: SubscriptionStatus?
    /// The subscription's original transaction identifier.
    public var originalTransactionId: String?
    /// The latest JWS-signed transaction.
    public var signedTransactionInfo: String?
    /// The JWS-signed renewal info.
    public var signedRenewalInfo: String?

    public init(
        status: SubscriptionStatus? = nil,
        originalTransactionId: String? = nil,
        signedTransactionInfo: String? = nil,
        signedRenewalInfo: String? = nil
    ) {
        self.status = status
        self.originalTransactionId = originalTransactionId
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }
}
