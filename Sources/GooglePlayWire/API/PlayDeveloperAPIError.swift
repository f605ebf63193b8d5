/// A refusal or failure of the Play Developer API, typed by what a caller does about it.
public struct PlayDeveloperAPIError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status (0: no answer came).
    public var status: Int
    /// Google's first `errors[].reason` (`purchaseTokenNotFound`, `rateLimitExceeded`, …), when it sent one.
    public var reason: String?
    public var message: String

    public init(status: Int, reason: String?, message: String) {
        self.status = status
        self.reason = reason
        self.message = message
    }

    /// A quota was exhausted: 429, or 403 with a rate-limit reason.
    public var isQuota: Bool {
        status == 429 || (status == 403 && (reason == "rateLimitExceeded" || reason == "userRateLimitExceeded"))
    }

    /// What Google's own clients retry: no answer, any 5xx, and quota errors.
    public var isRetryable: Bool { status == 0 || status >= 500 || isQuota }

    /// The token is unknown, invalidated, or expired too long ago to read.
    public var isGone: Bool { status == 404 || status == 410 }

    public var description: String { "Play Developer API \(status)\(reason.map { " \($0)" } ?? ""): \(message)" }
}
