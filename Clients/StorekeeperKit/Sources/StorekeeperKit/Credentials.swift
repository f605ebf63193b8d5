import Foundation
import HTTPTypes
import OpenAPIRuntime

/// How the app proves who its user is to Storekeeper: a token its own backend issued, or the guest credential the
/// server issued to this install.
public enum Credentials: Sendable, Hashable {
    case bearer(String)
    case guest(String)

    var header: HTTPField {
        switch self {
        case .bearer(let token): HTTPField(name: .authorization, value: "Bearer \(token)")
        case .guest(let token): HTTPField(name: HTTPField.Name("X-Storekeeper-Guest")!, value: token)
        }
    }
}

/// Adds the current credentials to every request the generated client sends.
struct CredentialsMiddleware: ClientMiddleware {
    let credentials: @Sendable () async -> Credentials?

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let credentials = await credentials() { request.headerFields.append(credentials.header) }
        return try await next(request, body, baseURL)
    }
}
