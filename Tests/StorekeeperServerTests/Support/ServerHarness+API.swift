import Foundation
import HTTPTypes
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import StorekeeperAPI

extension ServerHarness {
    /// The server's API through the client generated from `openapi.yaml` (`StorekeeperAPI`). Every answer it reads
    /// is decoded with the document's schemas, so a response that drifts from the document fails the test that
    /// read it; `headers` are sent with every call (credentials: the document's security schemes are not generated).
    func api(_ headers: [(String, String)] = [], instance: Int = 0) throws -> Client {
        guard let url = URL(string: serverURLs[instance % serverURLs.count]) else { throw URLError(.badURL) }
        return Client(serverURL: url, transport: AsyncHTTPClientTransport(), middlewares: [FixedHeaders(headers: headers)])
    }
}

/// Adds the same headers to every request a generated client sends.
struct FixedHeaders: ClientMiddleware {
    let headers: [(String, String)]

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        for (name, value) in headers {
            guard let field = HTTPField.Name(name) else { throw URLError(.badURL) }
            request.headerFields.append(HTTPField(name: field, value: value))
        }
        return try await next(request, body, baseURL)
    }
}
