import Foundation
import HTTPTypes
import OpenAPIRuntime

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Gives every request to the server a deadline of its own: a server (or a proxy) that takes the connection and never
/// answers costs the app `timeout`, then a `URLError(.timedOut)` — a `network` error, so a purchase stays journaled and
/// customer info falls back to the kept answer — instead of a call that never returns.
struct TimeoutMiddleware: ClientMiddleware {
    let timeout: Duration

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let timeout = self.timeout
        // The group ends before this call returns, so `next` never outlives it.
        return try await withoutActuallyEscaping(next) { next in
            try await withThrowingTaskGroup(of: (HTTPResponse, HTTPBody?)?.self) { group in
                group.addTask { try await next(request, body, baseURL) }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let answer = first else { throw URLError(.timedOut) }
                return answer
            }
        }
    }
}
