import Hummingbird
import StorekeeperCore

/// The request context of the request being handled, for the generated API's handlers: OpenAPI's handler signature
/// carries only the typed input, so ``RequestScopeMiddleware`` binds the context (with the caller its group's
/// authentication found) for the duration of the request.
enum RequestScope {
    @TaskLocal static var context: StorekeeperRequestContext?

    /// The current request's context; a handler reached without ``RequestScopeMiddleware`` is a wiring mistake and
    /// fails closed.
    static func current() throws -> StorekeeperRequestContext {
        guard let context else {
            throw StorekeeperError(.internal, code: "no_request_scope", message: "the request reached a handler outside its route group")
        }
        return context
    }
}

/// Binds ``RequestScope/context`` around the rest of the chain; added to each API group after its authentication.
struct RequestScopeMiddleware: RouterMiddleware {
    typealias Context = StorekeeperRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try await RequestScope.$context.withValue(context) { try await next(request, context) }
    }
}
