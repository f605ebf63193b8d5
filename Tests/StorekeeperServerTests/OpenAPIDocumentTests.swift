import AsyncHTTPClient
import Foundation
import Hummingbird
import NIOHTTP1
import StorekeeperServer
import StorekeeperStorage
import Testing

/// The OpenAPI document and the router agree: every documented operation is routed, every route is documented.
@Suite struct OpenAPIDocumentTests {
    /// (method, path) pairs under `paths:` in the document.
    static func documentedOperations(_ yaml: String) -> Set<String> {
        var operations = Set<String>()
        var path: String?
        var inPaths = false
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("paths:") {
                inPaths = true
                continue
            }
            if inPaths, let first = line.first, first != " ", first != "#" { inPaths = false }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     ") {
                let key = line.trimmingCharacters(in: .whitespaces).dropLast()
                if ["get", "post", "put", "delete", "patch"].contains(String(key)) { operations.insert("\(key.uppercased()) \(path)") }
            }
        }
        return operations
    }

    /// The routes the server's router holds, as `METHOD /path` with `{id}` parameters (Hummingbird's own list).
    static func routedOperations() async throws -> Set<String> {
        let provider = try await SQLiteDatabaseProvider(location: .memory)
        let configuration = try ServerHarness.serverConfiguration(simulatorURL: "http://127.0.0.1:9", database: .sqliteInMemory)
        let components = try ServerComponents(
            configuration: configuration,
            provider: provider,
            httpClient: .shared,
            logger: ServerHarness.quietLogger("routes")
        )
        let router = try StorekeeperServer.buildRouter(components)
        try await provider.close()
        return Set(
            router.routes.map { route in
                let path = "\(route.path)".split(separator: "/")
                    .map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
                    .joined(separator: "/")
                return "\(route.method) /\(path)"
            }
        )
    }

    // MARK: Tests

    @Test func documentMatchesRoutes() async throws {
        let documented = Self.documentedOperations(try StorekeeperServer.openAPIDocument())
        let routed = try await Self.routedOperations()
        #expect(routed.count >= 20)
        #expect(routed.subtracting(documented).isEmpty, "undocumented: \(routed.subtracting(documented).sorted())")
        #expect(documented.subtracting(routed).isEmpty, "documented but not routed: \(documented.subtracting(routed).sorted())")
    }

    @Test func everyDocumentedOperationAnswersOverHTTP() async throws {
        let document = try StorekeeperServer.openAPIDocument()
        try await ServerHarness.run(.sqlite) { server in
            let served = try await server.call(.GET, "/openapi.yaml")
            #expect(served.text == document)
            for operation in Self.documentedOperations(document).sorted() {
                let parts = operation.split(separator: " ")
                let path = String(parts[1]).replacingOccurrences(of: #"\{[a-z]+\}"#, with: "x", options: .regularExpression)
                let method = HTTPMethod(rawValue: String(parts[0]))
                let reply = try await server.call(method, path, json: method == .GET ? nil : [String: String]())
                #expect(reply.code != "not_found" && reply.status != 405, "\(operation): \(reply.status) \(reply.text.prefix(200))")
                #expect(reply.status < 500, "\(operation)")
            }
        }
    }

    /// Authentication is decided by a route's group, not by a line in its handler: every documented route under
    /// `/v1/admin` refuses a request without an admin key, and every client route one without a credential —
    /// before its handler reads anything.
    @Test func everyGuardedRouteRefusesAnAnonymousCaller() async throws {
        let document = try StorekeeperServer.openAPIDocument()
        let open: Set<String> = ["POST /v1/guests", "POST /v1/guests/claim"]
        try await ServerHarness.run(.sqlite) { server in
            for operation in Self.documentedOperations(document).sorted() where !open.contains(operation) {
                let parts = operation.split(separator: " ")
                guard parts[1].hasPrefix("/v1/") else { continue }
                let path = String(parts[1]).replacingOccurrences(of: #"\{[a-z]+\}"#, with: "x", options: .regularExpression)
                let method = HTTPMethod(rawValue: String(parts[0]))
                let reply = try await server.call(method, path, json: method == .GET ? nil : [String: String]())
                #expect(reply.status == 401, "\(operation) answered \(reply.status) without credentials")
                let expected = parts[1].hasPrefix("/v1/admin/") ? "admin_key_required" : "unauthenticated"
                #expect(reply.code == expected, "\(operation): \(reply.code ?? "")")
                // A client credential opens no admin route.
                if parts[1].hasPrefix("/v1/admin/") {
                    let asUser = try await server.call(
                        method,
                        path,
                        json: method == .GET ? nil : [String: String](),
                        headers: ServerHarness.userHeaders("eve")
                    )
                    #expect(asUser.status == 401, "\(operation) with a user token")
                }
            }
            // Every answer carries the request id its log lines carry.
            let first = try await server.call(.GET, "/health/live")
            let second = try await server.call(.GET, "/health/live")
            let ids = [first, second].compactMap { $0.headers["X-Request-Id"].first }
            #expect(ids.count == 2 && ids[0] != ids[1] && !ids[0].isEmpty)
        }
    }
}
