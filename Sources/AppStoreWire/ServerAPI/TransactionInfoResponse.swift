/// The answer of Get Transaction Info.
public struct TransactionInfoResponse: Codable, Hashable, Sendable {
    /// The JWS-signed transaction.
    public var signedTransactionInfo: String?

    public init(
        signedTransactionInfo: String? = nil
    ) {
        self.signedTransactionInfo = signedTransactionInfo
    }
}
