/// A request Storekeeper refuses or cannot finish, with a stable machine-readable code.
///
/// ``outcome`` tells a client what to do with the StoreKit transaction: finish it (`rejected`: final) or keep it
/// and submit again later (`retry`).
public struct StorekeeperError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Outcome: String, Sendable, Hashable, Codable {
        case rejected
        case retry
    }

    /// What went wrong, in the domain's terms; the HTTP edge chooses the status for each.
    public enum Kind: Sendable, Hashable {
        /// The input is malformed, out of bounds or names nothing usable.
        case invalidInput
        /// The caller did not prove who it is.
        case unauthenticated
        /// The caller is known and may not do this.
        case notPermitted
        /// What the request names does not exist.
        case notFound
        /// The request contradicts the current state (a limit, a binding, a reused key).
        case conflict
        /// Well formed and authentic, and refused for good (another app's transaction, a product never deliverable).
        case refused
        /// The input is larger than allowed.
        case tooLarge
        /// Too many such requests from this caller for now; `details["retryAfterSeconds"]` says when to try again.
        case rateLimited
        /// Nothing was decided; the same request may succeed later.
        case unavailable
        /// A fault of the server's own.
        case `internal`
    }

    public let kind: Kind
    /// Stable, snake_case: `invalid_signature`, `unknown_product`, `owned_by_another_user`, ...
    public let code: String
    public let message: String
    /// For purchase submissions: whether the client may finish the transaction.
    public let outcome: Outcome?
    /// Extra facts for the client, e.g. `alternativeProductId`.
    public let details: [String: String]?

    public init(_ kind: Kind, code: String, message: String, outcome: Outcome? = nil, details: [String: String]? = nil) {
        self.kind = kind
        self.code = code
        self.message = message
        self.outcome = outcome
        self.details = details
    }

    public var description: String { "\(code): \(message)" }

    public static func invalidInput(_ code: String, _ message: String) -> StorekeeperError {
        StorekeeperError(.invalidInput, code: code, message: message)
    }

    public static func notFound(_ code: String, _ message: String) -> StorekeeperError {
        StorekeeperError(.notFound, code: code, message: message)
    }

    /// Final: the transaction will never be delivered from this submission; the client may finish it.
    public static func rejected(_ kind: Kind, _ code: String, _ message: String) -> StorekeeperError {
        StorekeeperError(kind, code: code, message: message, outcome: .rejected)
    }

    /// Final: refused for good.
    public static func rejected(_ code: String, _ message: String) -> StorekeeperError {
        rejected(.refused, code, message)
    }

    /// Nothing was decided; keep the transaction and submit again.
    public static func retry(_ code: String, _ message: String) -> StorekeeperError {
        StorekeeperError(.unavailable, code: code, message: message, outcome: .retry)
    }
}

/// An error of Storekeeper's own: the API's error itself, or one domain's typed error, which answers as one API error
/// code. Code that decides on an outcome catches this, so a domain's errors and the edge's are handled alike.
public protocol StorekeeperFailure: Error, Sendable, CustomStringConvertible {
    /// What the API answers: the code, its kind (which picks the HTTP status), the message and the purchase outcome.
    var apiError: StorekeeperError { get }
}

extension StorekeeperFailure {
    public var description: String { apiError.description }
}

extension StorekeeperError: StorekeeperFailure {
    public var apiError: StorekeeperError { self }

    /// The API error `error` answers as, when it is one of Storekeeper's own.
    public init?(_ error: any Error) {
        guard let failure = error as? any StorekeeperFailure else { return nil }
        self = failure.apiError
    }
}
