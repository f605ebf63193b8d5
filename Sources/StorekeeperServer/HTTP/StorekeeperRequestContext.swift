import Foundation
import Hummingbird
import NIOCore
import StorekeeperCore

/// The request context of every Storekeeper route: Hummingbird's core storage, the caller's address (the webhook
/// counts refused bodies per source), the body limit, the API's JSON coding, and — once its group's authentication
/// middleware ran — who is calling.
public struct StorekeeperRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?
    /// The largest request body read; ``BodyLimitMiddleware`` sets it on every route from `http.maxBodyBytes`.
    public var maxUploadSize: Int = 1 << 20
    /// Who is calling: set by ``ClientAuthMiddleware`` or ``AdminAuthMiddleware`` on their groups, nil elsewhere.
    public var caller: Caller?
    /// The client's IP address: the socket peer's, or the one a trusted proxy forwarded (``ClientAddressMiddleware``).
    public var clientAddress: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        clientAddress = remoteAddress?.ipAddress
    }

    public var requestDecoder: APIRequestDecoder { APIRequestDecoder() }
    public var responseEncoder: APIResponseEncoder { APIResponseEncoder() }
}

/// An authenticated caller.
public enum Caller: Sendable, Hashable {
    /// A client of the app: a user token, a guest credential or the backend's API key.
    case client(ClientIdentity)
    /// An operator: an admin key, or a console operator acting through the admin API, with its scopes.
    case admin(AdminCaller)
}

extension StorekeeperRequestContext {
    /// The client calling (the client group's middleware authenticated it).
    func client() throws -> ClientIdentity {
        guard case .client(let identity) = caller else { throw Self.unauthenticated }
        return identity
    }

    /// The client's user; API-key calls must name one with `X-Storekeeper-User`.
    func clientUser() throws -> (UserID, ClientIdentity) {
        let identity = try client()
        guard let user = identity.user else {
            throw AuthError.userRequired
        }
        return (user, identity)
    }

    /// The operator's admin key name (the admin group's middleware authenticated it).
    func admin() throws -> String {
        guard case .admin(let admin) = caller else { throw Self.unauthenticated }
        return admin.name
    }

    /// `value` as the API's JSON, with `status`.
    func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        try responseEncoder.response(value, status: status)
    }

    // A route reached without its group's authentication is a wiring mistake; it fails closed.
    private static let unauthenticated = AuthError.unauthenticated
}
