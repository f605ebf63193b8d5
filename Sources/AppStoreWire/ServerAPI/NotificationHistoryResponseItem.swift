/// One notification in a ``NotificationHistoryResponse``.
public struct NotificationHistoryResponseItem: Codable, Hashable, Sendable {
    /// The JWS-signed notification (`responseBodyV2` payload).
    public var signedPayload: String?
    /// Each attempt to send it, with its result.
    public var sendAttempts: [SendAttemptItem]?
    /// Deprecated by Apple in favour of ``sendAttempts``.
    public var firstSendAttemptResult: SendAttemptResult?

    public init(
        signedPayload: String? = nil,
        sendAttempts: [SendAttemptItem]? = nil,
        firstSendAttemptResult: SendAttemptResult? = nil
    ) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
        self.firstSendAttemptResult = firstSendAttemptResult
    }
}
