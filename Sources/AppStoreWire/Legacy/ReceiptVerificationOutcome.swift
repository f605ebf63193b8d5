/// The result of verifying a receipt: exactly one of three outcomes, so none can be overlooked.
public enum ReceiptVerificationOutcome: Sendable, Hashable {
    /// The receipt is authentic and the configured app's; the decoded response (status 0, or 21006 for an
    /// expired iOS 6-style subscription receipt).
    case valid(VerifyReceiptResponse)
    /// Final: the receipt or the request is not acceptable and asking again will not change that.
    case invalid(status: VerifyReceiptStatus, reason: String)
    /// Nothing was decided (Apple busy, network or HTTP failure, unreadable answer): try again later.
    case retryLater(reason: String)

    /// The decoded response of a ``valid(_:)`` outcome.
    public var response: VerifyReceiptResponse? {
        if case .valid(let response) = self { return response }
        return nil
    }
}
