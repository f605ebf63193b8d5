import Foundation
import NIOHTTP1
import StorekeeperServer
import Testing

/// The OpenAPI document and the router agree: every documented operation exists, every route is documented.
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

    /// Routes registered in the controllers' sources, as `METHOD /path` with `{id}` parameters.
    static func routedOperations() throws -> Set<String> {
        let folder = ServerHarness.catalogURL.deletingLastPathComponent().appendingPathComponent("Sources/StorekeeperServer/Controllers")
        var operations = Set<String>()
        // Each route group's prefix, by the name controllers give it (see `APIRoutes`).
        let prefixes = ["router": "/", "v1": "/v1/", "client": "/v1/", "purchases": "/v1/", "admin": "/v1/admin/"]
        let pattern = try NSRegularExpression(pattern: #"(v1|router|client|purchases|admin)\.(get|post|put|delete)\("([^"]+)""#)
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let group = String(text[Range(match.range(at: 1), in: text)!])
                let method = String(text[Range(match.range(at: 2), in: text)!]).uppercased()
                var path = String(text[Range(match.range(at: 3), in: text)!])
                path = path.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }.joined(separator: "/")
                operations.insert("\(method) \(prefixes[group]!)\(path)")
            }
        }
        return operations
    }

    // MARK: Tests

    @Test func documentMatchesRoutes() throws {
        let documented = Self.documentedOperations(try StorekeeperServer.openAPIDocument())
        let routed = try Self.routedOperations()
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
