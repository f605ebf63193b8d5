import Dispatch
import Hummingbird

/// Counts and times every request by route, method and status (answered errors included: it runs outside
/// ``ErrorMiddleware``).
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = StorekeeperRequestContext
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        let response = try await next(request, context)
        metrics.request(
            route: context.endpointPath ?? "unmatched",
            method: request.method.rawValue,
            status: response.status.code,
            nanoseconds: DispatchTime.now().uptimeNanoseconds - started
        )
        return response
    }
}
