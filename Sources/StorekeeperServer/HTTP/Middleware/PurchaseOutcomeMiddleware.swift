import Hummingbird
import Logging
import StorekeeperCore
import StorekeeperStorage

/// The purchase routes' contract with the client SDK: every failure says whether to finish the StoreKit transaction.
/// A value the database refused is final (`rejected`); anything the server could not judge (an outage) is `retry`,
/// so the SDK keeps the transaction and submits it again. Decided here, by the routes' group, not by their paths.
struct PurchaseOutcomeMiddleware: RouterMiddleware {
    typealias Context = StorekeeperRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let failure as any StorekeeperFailure where failure.apiError.outcome != nil || failure.apiError.kind != .internal {
            let error = failure.apiError
            throw error
        } catch let failure as any StorekeeperFailure {
            let error = failure.apiError
            throw StorekeeperError(error.kind, code: error.code, message: error.message, outcome: .retry, details: error.details)
        } catch let error as any HTTPResponseError {
            throw error
        } catch  where DatabaseFailure.isInvalidInput(error) {
            context.logger.info("purchase refused by the database", metadata: ["error": "\(String(reflecting: error))"])
            throw StorekeeperError(.invalidInput, code: "invalid_input", message: "a value in the request cannot be stored", outcome: .rejected)
        } catch {
            context.logger.error("purchase failed", metadata: ["error": "\(String(reflecting: error))"])
            throw StorekeeperError(
                .internal,
                code: "internal",
                message: "the server could not complete the request; try again",
                outcome: .retry
            )
        }
    }
}
