import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import StorekeeperServer

/// Issue 30 item 24: behind a trusted reverse proxy, refusals count under the client's forwarded address, never the
/// proxy's; from anyone else `X-Forwarded-For` is ignored. A request whose head cannot be read gets the JSON body.
@Suite struct ClientAddressTests {
    func refusalSources(_ server: ServerHarness) async throws -> [String: Int] {
        let reply = try await server.call(.GET, "/v1/admin/notifications/refusals", headers: ServerHarness.adminHeaders)
        var sources: [String: Int] = [:]
        for item in reply["refusals"] as? [[String: Any]] ?? [] {
            sources[item["source"] as? String ?? "", default: 0] += item["count"] as? Int ?? 0
        }
        return sources
    }

    @Test("refusals count under the forwarded client behind a trusted proxy", arguments: TestDatabase.available)
    func trustedProxy(_ database: TestDatabase) async throws {
        try await ServerHarness.run(database, configure: { $0.trustedProxies = ["127.0.0.1"] }) { server in
            for (index, forwarded) in ["203.0.113.7", "198.51.100.1, 203.0.113.9", "not-an-address"].enumerated() {
                let reply = try await server.call(
                    .POST,
                    "/apple/notifications/v2",
                    raw: "not json \(index)",
                    headers: [("X-Forwarded-For", forwarded)]
                )
                #expect(reply.status == 400, "\(reply.text)")
            }
            let sources = try await refusalSources(server)
            // The proxy appends the client it saw; what is further left is the client's own claim.
            #expect(sources["203.0.113.7"] == 1 && sources["203.0.113.9"] == 1, "\(sources)")
            #expect(sources["198.51.100.1"] == nil, "\(sources)")
            #expect(sources["127.0.0.1"] == 1, "a forwarded value that is no address counts under the proxy: \(sources)")
        }
    }

    @Test("without a trusted proxy X-Forwarded-For is ignored")
    func untrusted() async throws {
        try await ServerHarness.run(.sqlite) { server in
            let reply = try await server.call(.POST, "/apple/notifications/v2", raw: "not json", headers: [("X-Forwarded-For", "203.0.113.7")])
            #expect(reply.status == 400)
            #expect(try await refusalSources(server) == ["127.0.0.1": 1])
        }
    }

    @Test("the client's address behind a chain of proxies")
    func chains() {
        let trusted: Set<String> = ["10.0.0.1", "10.0.0.2"]
        #expect(ClientAddressMiddleware.address(peer: "10.0.0.1", forwardedFor: ["1.2.3.4, 10.0.0.2"], trusted: trusted) == "1.2.3.4")
        #expect(ClientAddressMiddleware.address(peer: "10.0.0.1", forwardedFor: ["9.9.9.9", "1.2.3.4"], trusted: trusted) == "1.2.3.4")
        #expect(ClientAddressMiddleware.address(peer: "5.6.7.8", forwardedFor: ["1.2.3.4"], trusted: trusted) == "5.6.7.8")
        #expect(ClientAddressMiddleware.address(peer: "10.0.0.1", forwardedFor: [], trusted: trusted) == "10.0.0.1")
        #expect(ClientAddressMiddleware.address(peer: "10.0.0.1", forwardedFor: ["2001:db8::1"], trusted: trusted) == "2001:db8::1")
    }

    @Test("a head too large to read is answered with the JSON error body")
    func oversizedHeader() async throws {
        try await ServerHarness.run(.sqlite) { server in
            var request = HTTPClientRequest(url: server.serverURL + "/v1/me")
            request.headers.add(name: "X-Padding", value: String(repeating: "a", count: 200 * 1024))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 1 << 16)
            #expect(response.status.code == 431)
            #expect(response.headers.first(name: "Content-Type") == "application/json")
            let object = try JSONSerialization.jsonObject(with: Data(String(buffer: body).utf8)) as? [String: Any]
            #expect(object?["code"] as? String == "headers_too_large", "\(String(buffer: body))")
            #expect((object?["message"] as? String)?.isEmpty == false)
            // The server goes on answering.
            #expect(try await server.call(.GET, "/health").status == 200)
        }
    }
}
