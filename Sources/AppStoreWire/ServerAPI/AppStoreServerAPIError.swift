import Foundation

/// A failed App Store Server API call, after any retries.
public struct AppStoreServerAPIError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, broadly.
    public enum Kind: String, Sendable, Hashable {
        /// Apple answered with a non-2xx HTTP status (see ``httpStatus`` and ``errorCode``).
        case httpStatus
        /// No answer: connection, TLS or timeout failure.
        case transport
        /// A 2xx answer whose body could not be read.
        case malformedResponse
        /// The request could not be built (bad URL, unusable key, unsupported environment).
        case invalidRequest
    }

    public var kind: Kind
    /// The HTTP status, when Apple answered.
    public var httpStatus: Int?
    /// Apple's `errorCode`; nil for 401 (bad JWT) and for bodies without one.
    public var errorCode: APIErrorCode?
    /// Apple's `errorMessage`, or a description of the failure.
    public var errorMessage: String?
    /// When Apple allows the next try (`Retry-After`, epoch milliseconds on 429).
    public var retryAfter: Date?
    /// How many attempts were made.
    public var attempts: Int
    /// The transport or decoding error behind a ``Kind/transport`` or ``Kind/malformedResponse`` failure.
    public var underlyingError: (any Error)?

    public init(
        kind: Kind,
        httpStatus: Int? = nil,
        errorCode: APIErrorCode? = nil,
        errorMessage: String? = nil,
        retryAfter: Date? = nil,
        attempts: Int = 1,
        underlyingError: (any Error)? = nil
    ) {
        self.kind = kind
        self.httpStatus = httpStatus
        self.errorCode = errorCode
        self.errorMessage = errorMessage
        self.retryAfter = retryAfter
        self.attempts = attempts
        self.underlyingError = underlyingError
    }

    /// Whether the same request may succeed later: retryable error codes, 429, 5xx without a final code,
    /// and transport failures.
    public var isRetryable: Bool {
        switch kind {
        case .transport:
            return true
        case .malformedResponse, .invalidRequest:
            return false
        case .httpStatus:
            if httpStatus == 429 { return true }
            // A documented code decides (5000000 GeneralInternal is final, 5000001 is not); a 5xx
            // without one is an outage in front of Apple's API and worth another try.
            if let errorCode, errorCode.isKnown { return errorCode.isRetryable }
            return (httpStatus ?? 0) >= 500
        }
    }

    public var description: String {
        var text = "App Store Server API \(kind.rawValue)"
        if let httpStatus { text += " HTTP \(httpStatus)" }
        if let errorCode { text += " errorCode \(errorCode.rawValue)" }
        if let errorMessage { text += ": \(errorMessage)" }
        if let retryAfter { text += " (retry after \(retryAfter))" }
        if attempts > 1 { text += " after \(attempts) attempts" }
        return text
    }
}
