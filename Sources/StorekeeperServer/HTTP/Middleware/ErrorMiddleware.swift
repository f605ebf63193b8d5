import Foundation
import Hummingbird
import Logging
import StorekeeperCore
import StorekeeperStorage

/// Answers every failure as JSON `{code, message}` and counts it: domain errors with their own status,
/// Hummingbird's errors (unknown route, body too large) with theirs, a value the database refused as a 400, and
/// anything else (a database outage) as a 500. Purchase routes decide their own outcome first
/// (``PurchaseOutcomeMiddleware``).
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = StorekeeperRequestContext
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return response(for: error, context: context)
        }
    }

    private func response(for error: any Error, context: Context) -> Response {
        let body: ErrorBody
        let status: HTTPResponse.Status
        switch error {
        case let failure as any StorekeeperFailure:
            let error = failure.apiError
            status = error.kind.status
            body = ErrorBody(code: error.code, message: error.message, outcome: error.outcome?.rawValue, details: error.details)
            if error.kind == .internal {
                context.logger.error("request failed", metadata: ["error": "\(error)"])
            } else {
                context.logger.info("request refused", metadata: ["code": "\(error.code)", "reason": "\(error.message)"])
            }
        case let error as any HTTPResponseError:
            status = error.status
            let code: String =
                switch status {
                case .notFound: "not_found"
                case .methodNotAllowed: "method_not_allowed"
                case .contentTooLarge: "body_too_large"
                default: "http_\(status.code)"
                }
            body = ErrorBody(code: code, message: status.reasonPhrase)
        case let error where DatabaseFailure.isInvalidInput(error):
            // The database refused a value of the request (PostgreSQL's data exceptions): the request is at fault.
            status = .badRequest
            body = ErrorBody(code: "invalid_input", message: "a value in the request cannot be stored")
            context.logger.info("request refused by the database", metadata: ["error": "\(String(reflecting: error))"])
        default:
            status = .internalServerError
            // Storage failures land here: a 5xx so the client (or Apple) tries again; nothing was committed.
            body = ErrorBody(code: "internal", message: "the server could not complete the request; try again")
            context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
        }
        metrics.refused(code: body.code)
        var response = (try? context.json(body, status: status)) ?? Response(status: status)
        if status == .tooManyRequests, let seconds = body.details?["retryAfterSeconds"] { response.headers[.retryAfter] = seconds }
        return response
    }
}
