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
            if line.hasPrefix("paths:") { inPaths = true; continue }
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
        let pattern = try NSRegularExpression(pattern: #"(v1|router)\.(get|post|put|delete)\("([^"]+)""#)
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let group = String(text[Range(match.range(at: 1), in: text)!])
                let method = String(text[Range(match.range(at: 2), in: text)!]).uppercased()
                var path = String(text[Range(match.range(at: 3), in: text)!])
                path = path.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }.joined(separator: "/")
                operations.insert("\(method) /\(group == "v1" ? "v1/" : "")\(path)")
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
}
