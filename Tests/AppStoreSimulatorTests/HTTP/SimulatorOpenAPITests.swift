import AppStoreSimulator
import AppStoreWire
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import SwiftASN1
import Testing

/// `simulator-openapi.yaml` describes exactly the routes the simulator registers, and is served at
/// `GET /openapi.yaml`.
@Suite struct SimulatorOpenAPITests {
    typealias H = SimulatorHarness

    struct Setup {
        let store: SimulatedAppStore
        let rootPEM: String
        let apple: SimulatorServer.AppleSide
    }

    func setup() async throws -> Setup {
        let h = try await H()
        let apple = SimulatorServer.AppleSide(
            apiKeys: ["KEY1": P256.Signing.PrivateKey().publicKey],
            issuerId: "issuer",
            receiptIdentity: try ReceiptFixtures.identity()
        )
        return Setup(store: h.store, rootPEM: try await h.store.signingRoot.serializeAsPEM().pemString, apple: apple)
    }

    /// The document's operations, as `METHOD /path` with OpenAPI `{parameters}`: every key under `paths:` (two-space
    /// indent) and the HTTP methods under it (four-space indent).
    static func documentedRoutes(_ document: String) -> Set<SimulatorRoute> {
        var routes = Set<SimulatorRoute>()
        var inPaths = false
        var path: String?
        for line in document.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" {
                inPaths = true
                continue
            }
            guard inPaths else { continue }
            if let first = line.first, first != " ", first != "#" { break }  // the next top-level key
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
                continue
            }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            for method in ["get", "post", "put", "delete", "patch", "head"] where line.hasPrefix("    \(method):") {
                if let path { routes.insert(SimulatorRoute(method: method.uppercased(), path: path)) }
                _ = trimmed
            }
        }
        return routes
    }

    /// `{name}` → `{}`: parameter names are documentation, the shape is the route.
    static func shape(_ route: SimulatorRoute) -> SimulatorRoute {
        SimulatorRoute(method: route.method, path: route.path.replacing(/\{[^}]*\}/, with: "{}"))
    }

    // MARK: Tests

    @Test func everyRegisteredRouteIsDocumentedAndEveryDocumentedRouteIsRegistered() async throws {
        let s = try await setup()
        let registered = await SimulatorServer.routes(store: s.store, rootPEM: s.rootPEM, apple: s.apple)
        #expect(Set(registered).count == registered.count, "a route is registered twice")
        let documented = Self.documentedRoutes(try SimulatorServer.openAPIDocument())
        let served = Set(registered.map(Self.shape))
        let described = Set(documented.map(Self.shape))
        #expect(served.subtracting(described).isEmpty, "undocumented: \(served.subtracting(described).sorted())")
        #expect(described.subtracting(served).isEmpty, "documented but not served: \(described.subtracting(served).sorted())")
        // Parameter names match too, so the document's parameters are the router's.
        #expect(Set(registered) == documented)
        // Sanity: the device, control and Apple surfaces are all there.
        #expect(documented.contains(SimulatorRoute(method: "POST", path: "/device/purchases")))
        #expect(documented.contains(SimulatorRoute(method: "GET", path: "/control/consumption")))
        #expect(documented.contains(SimulatorRoute(method: "GET", path: "/inApps/v2/history/{id}")))
        #expect(documented.count > 50)
        // Without Apple's side, only the device and control routes are registered, all documented.
        let bare = await SimulatorServer.routes(store: s.store, rootPEM: s.rootPEM)
        #expect(Set(bare).isSubset(of: documented))
        #expect(!bare.contains { $0.path.hasPrefix("/inApps") || $0.path.hasSuffix("verifyReceipt") })
    }

    @Test func everyDocumentedRouteAnswersFromTheSimulator() async throws {
        let s = try await setup()
        let documented = Self.documentedRoutes(try SimulatorServer.openAPIDocument())
        let app = await SimulatorServer.buildApplication(store: s.store, rootPEM: s.rootPEM, apple: s.apple, port: 0)
        try await app.test(.router) { client in
            for route in documented.sorted() {
                let uri = route.path.replacing(/\{[^}]*\}/, with: "unknown-id")
                let method = HTTPRequest.Method(route.method)!
                let body = method == .get ? nil : ByteBuffer(string: "{}")
                try await client.execute(uri: uri, method: method, body: body) { response in
                    // The router's own 404 has no JSON body; the simulator's answers (including its not-found
                    // errors for the unknown ids) always say who answered.
                    guard response.status == .notFound else { return }
                    let object = try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
                    #expect(object?["error"] != nil || object?["errorCode"] != nil, "\(route) is not served")
                }
            }
        }
    }

    @Test func theDocumentIsServedAndItsReferencesResolve() async throws {
        let s = try await setup()
        let document = try SimulatorServer.openAPIDocument()
        #expect(document.hasPrefix("openapi: 3.1.0\n"))
        let app = await SimulatorServer.buildApplication(store: s.store, rootPEM: s.rootPEM, port: 0)
        try await app.test(.router) { client in
            try await client.execute(uri: "/openapi.yaml", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/yaml")
                #expect(String(buffer: response.body) == document)
            }
        }
        // Every local $ref names a component the document defines.
        let lines = document.split(separator: "\n").map(String.init)
        var defined = Set<String>()
        var section: String?
        var inComponents = false
        for line in lines {
            if line == "components:" {
                inComponents = true
                continue
            }
            guard inComponents else { continue }
            if line.hasPrefix("  "), !line.hasPrefix("   "), line.hasSuffix(":") { section = String(line.dropFirst(2).dropLast()) }
            if line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":"), let section {
                defined.insert("#/components/\(section)/\(line.dropFirst(4).dropLast())")
            }
        }
        let references = Set(document.matches(of: /\$ref: "([^"]+)"/).map { String($0.1) })
        #expect(!references.isEmpty)
        #expect(references.subtracting(defined).isEmpty, "unresolved: \(references.subtracting(defined).sorted())")
    }
}
