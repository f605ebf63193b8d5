import Foundation
import NIOHTTP1
import StorekeeperCore
import Testing

@testable import StorekeeperServer

/// Admin keys hold scopes; each admin operation checks the one openapi.yaml declares for it (issue 30 item 19).
@Suite struct AdminScopeTests {
    static let readerKey = "reader-key-0123456789abcdef"

    @Test("a key scoped to reading events reads them and is refused everything else, changing nothing", arguments: TestDatabase.available)
    func scopedKey(_ database: TestDatabase) async throws {
        try await ServerHarness.run(
            database,
            configure: {
                $0.auth.adminKeys["sync"] = Self.readerKey
                $0.auth.adminKeyScopes["sync"] = [.eventsRead, .usersRead]
            }
        ) { server in
            let coins = try await server.coins("nina")
            let reader = [("X-Admin-Key", Self.readerKey)]
            #expect(try await server.call(.GET, "/v1/admin/events", headers: reader).status == 200)
            #expect(try await server.call(.GET, "/v1/admin/users/nina", headers: reader).status == 200)
            let refused: [(String, ServerHarness.Reply)] = [
                (
                    "wallet",
                    try await server.call(
                        .POST,
                        "/v1/admin/users/nina/wallet/adjust",
                        json: ["amount": 1_000, "reason": "scope test", "idempotencyKey": "scope-1"],
                        headers: reader
                    )
                ),
                (
                    "catalog",
                    try await server.call(
                        .PUT,
                        "/v1/admin/catalog/products/com.example.storekeeper.scope-test",
                        json: ["kind": "consumable", "coins": 5],
                        headers: reader
                    )
                ),
                ("job", try await server.call(.POST, "/v1/admin/jobs/renewal-sweep/run", json: [:], headers: reader)),
                ("notifications", try await server.call(.GET, "/v1/admin/notifications", headers: reader)),
                ("revenue", try await server.call(.GET, "/v1/admin/reports/revenue?from=2026-01-01&to=2026-01-31", headers: reader)),
            ]
            for (name, reply) in refused {
                #expect(reply.status == 403, "\(name): \(reply.text.prefix(300))")
                #expect(reply.code == "insufficient_scope", "\(name): \(reply.text.prefix(300))")
                #expect((reply["message"] as? String)?.contains("sync") == true, "\(name) names the key")
            }
            #expect(try await server.coins("nina") == coins, "a refused wallet adjustment changes nothing")
            #expect(
                try await server.call(.GET, "/v1/admin/catalog", headers: ServerHarness.adminHeaders).text.contains(
                    "com.example.storekeeper.scope-test"
                ) == false
            )
            // The key without scopes named holds every one.
            let adjusted = try await server.call(
                .POST,
                "/v1/admin/users/nina/wallet/adjust",
                json: ["amount": 10, "reason": "scope test", "idempotencyKey": "scope-2"],
                headers: ServerHarness.adminHeaders
            )
            #expect(adjusted.status == 200, "\(adjusted.text.prefix(300))")
            #expect(try await server.coins("nina") == coins + 10)
        }
    }

    @Test("every admin operation declares a known scope, and an undeclared one stops registration")
    func declaredScopes() throws {
        let document = try StorekeeperServer.openAPIDocument()
        var operations = 0
        var path = ""
        for line in document.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("  /"), line.hasSuffix(":") { path = String(line.dropFirst(2).dropLast()) }
            guard path.hasPrefix("/v1/admin/") else { continue }
            for method in ["get", "put", "post", "delete"] where line == "    \(method):" {
                operations += 1
                #expect(throws: Never.self, "\(method) \(path)") { try AdminScope.required(method: method.uppercased(), path: path) }
            }
        }
        #expect(operations == AdminScope.declared.count)
        #expect(operations >= 25)
        #expect(throws: StorekeeperError.self) { try AdminScope.required(method: "DELETE", path: "/v1/admin/users/{id}") }
    }

    @Test("console roles are sets of the same scopes")
    func consoleRoles() {
        #expect(ConsoleRole.viewer.holds(.usersRead) && !ConsoleRole.viewer.holds(.walletWrite))
        #expect(ConsoleRole.support.holds(.walletWrite) && !ConsoleRole.support.holds(.catalogWrite) && !ConsoleRole.support.holds(.jobsRun))
        #expect(AdminScope.allCases.allSatisfy { ConsoleRole.admin.holds($0) })
        #expect(ConsoleRole.viewer.scopes.allSatisfy { $0.rawValue.hasSuffix(":read") })
    }
}
