import Configuration
import Foundation
import NIOHTTP1
import Testing

@testable import StorekeeperServer

/// `/metrics` behind a bearer token when `auth.metricsToken` is set (issue 30, item 24).
@Suite("Metrics behind a token")
struct MetricsTokenTests {
    static let token = "metrics-token-0123456789abcdef"

    @Test("with a token configured: 401 without it or with another, the exposition with it")
    func tokenRequired() async throws {
        try await ServerHarness.run(.sqlite, configure: { $0.auth.metricsToken = Self.token }) { server in
            let anonymous = try await server.call(.GET, "/metrics")
            #expect(anonymous.status == 401)
            #expect(!anonymous.text.contains("storekeeper_"), "no figures without the token")
            #expect(anonymous.headers.first(name: "WWW-Authenticate")?.hasPrefix("Bearer") == true)
            #expect(try await server.call(.GET, "/metrics", headers: [("Authorization", "Bearer not-the-token-0123456789")]).status == 401)
            #expect(try await server.call(.GET, "/metrics", headers: [("Authorization", Self.token)]).status == 401, "a bare token is no Bearer")
            let scraped = try await server.call(.GET, "/metrics", headers: [("Authorization", "Bearer \(Self.token)")])
            #expect(scraped.status == 200 && scraped.text.contains("storekeeper_"))
            // Health stays open for load balancers.
            #expect(try await server.call(.GET, "/health").status == 200)
        }
    }

    @Test("a short token refuses the start; a good one is read and never shown")
    func tokenConfiguration() throws {
        let base: [AbsoluteConfigKey: ConfigValue] = ["apps.main.appStore.bundleId": "com.example", "apps.main.appStore.appAppleId": 1]
        var short = base
        short["auth.metricsToken"] = .init(.string("short"), isSecret: true)
        #expect(throws: ConfigurationError.self) { try ServerConfiguration(reader: ConfigurationTests.reader(short)) }
        var good = base
        good["auth.metricsToken"] = .init(.string(Self.token), isSecret: true)
        let configuration = try ServerConfiguration(reader: ConfigurationTests.reader(good))
        #expect(configuration.auth.metricsToken == Self.token)
        #expect(!"\(configuration.auth)".contains(Self.token))
    }
}
