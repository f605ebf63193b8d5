/// The result of one attempt of the App Store to send a notification to your server.
public struct SendAttemptResult: OpenStringEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let success: Self = "SUCCESS"
    public static let timedOut: Self = "TIMED_OUT"
    public static let tlsIssue: Self = "TLS_ISSUE"
    public static let circularRedirect: Self = "CIRCULAR_REDIRECT"
    public static let noResponse: Self = "NO_RESPONSE"
    public static let socketIssue: Self = "SOCKET_ISSUE"
    public static let unsupportedCharset: Self = "UNSUPPORTED_CHARSET"
    public static let invalidResponse: Self = "INVALID_RESPONSE"
    public static let prematureClose: Self = "PREMATURE_CLOSE"
    public static let unsuccessfulHTTPResponseCode: Self = "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
    public static let other: Self = "OTHER"

    public static let knownValues: [Self] = [
        .success, .timedOut, .tlsIssue, .circularRedirect, .noResponse, .socketIssue, .unsupportedCharset,
        .invalidResponse, .prematureClose, .unsuccessfulHTTPResponseCode, .other,
    ]
}
