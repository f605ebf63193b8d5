/// The answer of Get Test Notification Status.
public struct CheckTestNotificationResponse: Codable, Hashable, Sendable {
    /// The JWS-signed test notification.
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
