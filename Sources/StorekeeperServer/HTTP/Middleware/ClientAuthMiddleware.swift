import Hummingbird

/// Authenticates every route of the client group (user token, guest credential or API key) before its handler
/// runs, and puts the identity in the context: a route added to the group cannot forget it.
struct ClientAuthMiddleware: RouterMiddleware {
    typealias Context = StorekeeperRequestContext
    let auth: Authenticator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.caller = .client(try await auth.client(request))
        return try await next(request, context)
    }
}

/// Authenticates every route under `/v1/admin` with an admin key before its handler runs.
struct AdminAuthMiddleware: RouterMiddleware {
    typealias Context = StorekeeperRequestContext
    let auth: Authenticator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.caller = .admin(try auth.admin(request))
        return try await next(request, context)
    }
}
