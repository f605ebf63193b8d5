import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A minimal browser for the operator console's tests: a cookie jar, no redirects followed (the tests read them),
/// forms sent URL-encoded.
final class ConsoleBrowser: @unchecked Sendable {
    struct Page {
        let status: Int
        let text: String
        let headers: HTTPHeaders
        var location: String? { headers.first(name: "Location") }

        /// The value of the hidden input `name` on the page.
        func hidden(_ name: String) -> String? {
            guard let range = text.range(of: "name=\"\(name)\" value=\"") else { return nil }
            let rest = text[range.upperBound...]
            return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
        }
    }

    let base: String
    let client: HTTPClient
    private(set) var cookies: [String: String] = [:]
    private(set) var setCookieHeaders: [String] = []

    init(base: String) {
        self.base = base
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func shutdown() async throws { try await client.shutdown() }

    func get(_ path: String) async throws -> Page { try await send(.GET, path, body: nil) }

    func post(_ path: String, _ form: [(String, String)]) async throws -> Page {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let body = form.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
        return try await send(.POST, path, body: body)
    }

    /// Signs in through the login form; returns the page the sign-in answered.
    func signIn(_ name: String, _ secret: String) async throws -> Page {
        let login = try await get("/admin/login")
        return try await post("/admin/login", [("nonce", login.hidden("nonce") ?? ""), ("name", name), ("secret", secret)])
    }

    func send(_ method: HTTPMethod, _ path: String, body: String?, headers: [(String, String)] = []) async throws -> Page {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if !cookies.isEmpty {
            request.headers.add(name: "Cookie", value: cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))
        }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await client.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        for header in response.headers[canonicalForm: "Set-Cookie"] {
            setCookieHeaders.append(String(header))
            let pair = header.split(separator: ";").first.map(String.init) ?? ""
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard let name = parts.first else { continue }
            let value = parts.count > 1 ? parts[1] : ""
            if value.isEmpty || header.contains("Max-Age=0") { cookies[name] = nil } else { cookies[name] = value }
        }
        return Page(status: Int(response.status.code), text: String(buffer: bytes), headers: response.headers)
    }
}
