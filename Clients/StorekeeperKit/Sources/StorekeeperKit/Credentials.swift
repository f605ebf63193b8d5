import Foundation
import HTTPTypes
import OpenAPIRuntime

/// How the app proves who its user is to Storekeeper: a token its own backend issued, or the guest credential the
/// server issued to this install.
public enum Credentials: Sendable, Hashable {
    case bearer(String)
    case guest(String)

    /// The credential's digest as the server signs it into its answers.
    var digest: String {
        switch self {
        case .bearer(let token), .guest(let token): AnswerVerifier.digest(of: token)
        }
    }

    /// The digest of the credential a request carries (what ``CredentialsMiddleware`` added), or `nil`.
    static func digest(in request: HTTPRequest) -> String? {
        if let authorization = request.headerFields[.authorization], authorization.hasPrefix("Bearer ") {
            return AnswerVerifier.digest(of: String(authorization.dropFirst(7)))
        }
        return request.headerFields[HTTPField.Name("X-Storekeeper-Guest")!].map(AnswerVerifier.digest(of:))
    }

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
