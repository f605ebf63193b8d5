/// The answer of Get App Transaction Info.
public struct AppTransactionInfoResponse: Codable, Hashable, Sendable {
    /// The JWS-signed app transaction.
    public var signedAppTransactionInfo: String?

    public init(
        signedAppTransactionInfo: String? = nil
    ) {
        self.signedAppTransactionInfo = signedAppTransactionInfo
    }
}
