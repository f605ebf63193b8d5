import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import StorekeeperAPI

extension ServerHarness {
    /// The server's API through the client generated from `openapi.yaml` (`StorekeeperAPI`). Every answer it reads
    /// is decoded with the document's schemas, so a response that drifts from the document fails the test that
    /// read it; `headers` are sent with every call (credentials: the document's security schemes are not generated).
    /// Five minutes per call, not the transport's one nor `HTTPClient.shared`'s 90 seconds of silence: beside the
    /// whole suite on two cores, a month's reconciliation against segmented reports has taken longer.
    func api(_ headers: [(String, String)] = [], instance: Int = 0) throws -> Client {
        guard let url = URL(string: serverURLs[instance % serverURLs.count]) else { throw URLError(.badURL) }
        let transport = AsyncHTTPClientTransport(configuration: .init(client: Self.apiHTTPClient, timeout: .minutes(5)))
        return Client(serverURL: url, transport: transport, middlewares: [FixedHeaders(headers: headers)])
    }
}

extension ServerHarness {
    /// The generated clients' HTTP client: reads may wait five minutes. Lives as long as the test process, as
    /// `HTTPClient.shared` does.
    static let apiHTTPClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(30), read: .minutes(5))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()
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
