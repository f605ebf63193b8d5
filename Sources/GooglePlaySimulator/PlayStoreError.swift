import GooglePlayWire

/// A refusal of the simulated Play Developer API, answered with Google's error body.
public struct PlayStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    public var status: Int
    public var reason: String
    public var message: String

    public init(_ status: Int, _ reason: String, _ message: String) {
        self.status = status
        self.reason = reason
        self.message = message
    }

    public var description: String { "\(status) \(reason): \(message)" }

    /// Google's JSON error body.
    public var body: GoogleAPIErrorBody {
        let grpc = [
            400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 410: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED",
        ]
        return GoogleAPIErrorBody(
            error: .init(code: status, message: message, errors: [.init(message: message, reason: reason)], status: grpc[status] ?? "INTERNAL")
        )
    }

    static func tokenNotFound() -> Self { Self(404, "purchaseTokenNotFound", "The purchase token was not found.") }
    static func wrongPackage() -> Self { Self(400, "purchaseTokenDoesNotMatchPackageName", "The purchase token does not match the package name.") }
    static func invalid(_ what: String) -> Self { Self(400, "invalid", "Invalid Value: \(what)") }
}
