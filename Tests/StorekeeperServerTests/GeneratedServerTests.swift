import Foundation
import NIOHTTP1
import StorekeeperServer
import Testing

/// The generated server's edge: what `RouteGroupTransport` makes of a request the document does not accept, over
/// real sockets. Each answer is a 400 or 413 that names the problem, never a 500, and nothing is written.
@Suite("Generated server: requests the document does not accept")
struct GeneratedServerTests {
    @Test("wrong parameter types, wrong content types, empty and oversized bodies", arguments: TestDatabase.available)
    func refusals(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let user = ServerHarness.userHeaders("edge")
            let admin = ServerHarness.adminHeaders
            let cases: [(name: String, status: Int, code: String, reply: ServerHarness.Reply)] = [
                ("integer query", 400, "invalid_parameter", try await server.call(.GET, "/v1/admin/events?limit=abc", headers: admin)),
                ("moment query", 400, "invalid_parameter", try await server.call(.GET, "/v1/me?at=12x", headers: user)),
                ("unknown job", 400, "invalid_parameter", try await server.call(.POST, "/v1/admin/jobs/nope/run", headers: admin)),
                ("limit out of range", 400, "invalid_limit", try await server.call(.GET, "/v1/admin/events?limit=0", headers: admin)),
                (
                    "text body", 400, "unsupported_content_type",
                    try await server.call(
                        .POST,
                        "/v1/orders",
                        headers: user + [("Content-Type", "text/plain")],
                        rawBody: "{\"productId\":\"x\"}"
                    )
                ),
                ("empty required body", 400, "malformed_json", try await server.call(.POST, "/v1/orders", raw: "", headers: user)),
                ("wrong field type", 400, "malformed_json", try await server.call(.POST, "/v1/orders", json: ["productId": 5], headers: user)),
                ("not JSON", 400, "malformed_json", try await server.call(.POST, "/v1/wallet/spend", raw: "{amount:", headers: user)),
                (
                    "html only", 400, "not_acceptable",
                    try await server.call(.GET, "/v1/me", headers: user + [("Accept", "text/html")])
                ),
                (
                    "oversized body", 413, "body_too_large",
                    try await server.call(.POST, "/v1/wallet/spend", raw: String(repeating: " ", count: 2 << 20), headers: user)
                ),
            ]
            for (name, status, code, reply) in cases {
                #expect(reply.status == status, "\(name): \(reply.text.prefix(300))")
                #expect(reply.code == code, "\(name): \(reply.text.prefix(300))")
                #expect((reply["message"] as? String)?.isEmpty == false, "\(name) names the problem")
            }
            // An optional body may be empty: a job run without `now` runs as of now.
            let run = try await server.call(.POST, "/v1/admin/jobs/renewal-sweep/run", raw: "", headers: admin)
            #expect(run.status == 200 || run.code == "job_unavailable", "\(run.text)")
            #expect(try await server.coins("edge") == 0)
        }
    }
}
