import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// One HTTP exchange with Google (the API, the token endpoint, the certificate lists), small enough to run over
/// AsyncHTTPClient in production and over the simulator in tests.
public struct PlayHTTPRequest: Sendable, Hashable {
    public var method: String
    public var url: String
    public var headers: [(String, String)]
    public var body: [UInt8]?

    public init(method: String, url: String, headers: [(String, String)] = [], body: [UInt8]? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.method == rhs.method && lhs.url == rhs.url && lhs.body == rhs.body
            && lhs.headers.map { [$0.0, $0.1] } == rhs.headers.map { [$0.0, $0.1] }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(url)
        hasher.combine(body)
    }
}

public struct PlayHTTPResponse: Sendable, Hashable {
    public var status: Int
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Sends a request; throws only when no answer came (connection refused, timeout).
public protocol PlayHTTPTransport: Sendable {
    func send(_ request: PlayHTTPRequest) async throws -> PlayHTTPResponse
}

/// AsyncHTTPClient as the transport: bounded answers (Google's are small; a list page is well under the limit).
public struct AsyncHTTPPlayTransport: PlayHTTPTransport {
    public let client: HTTPClient
    public let timeout: TimeAmount
    public let maximumResponseSize: Int

    public init(client: HTTPClient, timeout: TimeAmount = .seconds(30), maximumResponseSize: Int = 8 * 1024 * 1024) {
        self.client = client
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
    }

    public func send(_ request: PlayHTTPRequest) async throws -> PlayHTTPResponse {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(outgoing, timeout: timeout)
        let body = try await response.body.collect(upTo: maximumResponseSize)
        var headers: [String: String] = [:]
        for header in response.headers { headers[header.name.lowercased()] = header.value }
        return PlayHTTPResponse(status: Int(response.status.code), headers: headers, body: Array(buffer: body))
    }
}
