import Dispatch
import HTTPTypes
import Hummingbird
import Logging

/// One log line per request as it completes — method, route, status, duration — under the request's id
/// (`hb.request.id`, which every other line of the request carries too), and the id as `X-Request-Id` on the
/// response, so a client's report can be found in the logs.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = StorekeeperRequestContext
    static let requestIdHeader = HTTPField.Name("X-Request-Id")!
    let level: Logger.Level

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        var response = try await next(request, context)
        response.headers[Self.requestIdHeader] = context.id
        context.logger.log(
            level: level,
            "request",
            metadata: [
                "http.method": "\(request.method.rawValue)", "http.route": "\(context.endpointPath ?? request.uri.path)",
                "http.status": "\(response.status.code)",
                "duration_ms": "\((DispatchTime.now().uptimeNanoseconds - started) / 1_000_000)",
            ]
        )
        return response
    }
}
