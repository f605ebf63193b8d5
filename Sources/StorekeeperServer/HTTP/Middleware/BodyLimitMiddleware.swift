import Hummingbird

/// Sets the context's upload limit (`http.maxBodyBytes`) for every route: the request decoder and the webhooks
/// read at most that much.
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = StorekeeperRequestContext
    let maxBodyBytes: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.maxUploadSize = maxBodyBytes
        return try await next(request, context)
    }
}
