import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperServer
import Testing

/// Issue 30 item 21: `POST /v1/guests` is anonymous, so it is limited per client address, and guests that never did
/// anything are deleted after `auth.guestLifetimeDays`.
@Suite struct GuestLimitsTests {
    @Test("an address gets its hour's guests, then 429 with Retry-After; another address behind the proxy is not held up")
    func perAddress() async throws {
        try await ServerHarness.run(
            .sqlite,
            configure: {
                $0.auth.guestsPerAddressPerHour = 3
                $0.trustedProxies = ["127.0.0.1"]
            }
        ) { server in
            let first = [("X-Forwarded-For", "203.0.113.7")]
            for _ in 0..<3 { #expect(try await server.call(.POST, "/v1/guests", headers: first).status == 201) }
            let refused = try await server.call(.POST, "/v1/guests", headers: first)
            #expect(refused.status == 429, "\(refused.text)")
            #expect(refused.code == "too_many_guests")
            let retryAfter = Int(refused.headers.first(name: "Retry-After") ?? "") ?? 0
            #expect((1...3_600).contains(retryAfter), "\(refused.headers)")
            #expect(try await server.call(.POST, "/v1/guests", headers: [("X-Forwarded-For", "203.0.113.8")]).status == 201)
        }
    }

    @Test("guests that never did anything are deleted after their lifetime; one with an order stays", arguments: TestDatabase.available)
    func idleGuestsExpire(_ database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let idle = try await server.newGuest()
            let ordering = try await server.newGuest()
            let order = try await server.call(.POST, "/v1/orders", json: ["productId": PurchaseFlowTests.coins], headers: ordering.headers)
            #expect(order.status == 201, "\(order.text)")
            #expect(try await server.call(.GET, "/v1/me", headers: idle.headers).status == 200)
            // Within the lifetime nothing goes.
            #expect(try await server.runJob("expire-guests", now: Date().addingTimeInterval(29 * 86_400)) == 0)
            #expect(try await server.runJob("expire-guests", now: Date().addingTimeInterval(31 * 86_400)) == 1)
            let gone = try await server.call(.GET, "/v1/me", headers: idle.headers)
            #expect(gone.status == 401 && gone.code == "invalid_guest_token", "\(gone.text)")
            #expect(try await server.call(.GET, "/v1/me", headers: ordering.headers).status == 200)
            #expect(try await server.runJob("expire-guests", now: Date().addingTimeInterval(31 * 86_400)) == 0)
        }
    }
}
