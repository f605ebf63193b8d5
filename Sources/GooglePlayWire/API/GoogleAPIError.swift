/// Google's JSON error body: `{"error": {"code", "message", "errors": [{"reason", …}], "status"}}`.
public struct GoogleAPIErrorBody: Codable, Sendable, Hashable {
    public var error: Details

    public init(error: Details) { self.error = error }

    public struct Details: Codable, Sendable, Hashable {
        /// The HTTP status.
        public var code: Int?
        public var message: String?
        public var errors: [Item]?
        /// The canonical gRPC code name (`NOT_FOUND`, `RESOURCE_EXHAUSTED`, …).
        public var status: String?

        public init(code: Int?, message: String?, errors: [Item]? = nil, status: String? = nil) {
            self.code = code
            self.message = message
            self.errors = errors
            self.status = status
        }
    }

    public struct Item: Codable, Sendable, Hashable {
        public var message: String?
        public var domain: String?
        /// `purchaseTokenNotFound`, `rateLimitExceeded`, …
        public var reason: String?
        public var location: String?
        public var locationType: String?

        public init(message: String? = nil, domain: String? = "global", reason: String?, location: String? = nil, locationType: String? = nil) {
            self.message = message
            self.domain = domain
            self.reason = reason
            self.location = location
            self.locationType = locationType
        }
    }

    /// The first item's reason, which is what Google's clients decide on.
    public var reason: String? { error.errors?.first?.reason }
}

/// Errors of this library's own (reading Google's formats).
public enum PlayWireError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not what Google sends.
    case malformed(String)

    public var description: String {
        switch self {
        case .malformed(let why): "malformed: \(why)"
        }
    }
}
