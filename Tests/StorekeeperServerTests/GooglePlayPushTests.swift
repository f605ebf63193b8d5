import Foundation
import GooglePlaySimulator
import GooglePlayWire
import NIOHTTP1
import StorekeeperAPI
import StorekeeperServer
import Testing

/// `POST /google/rtdn` refuses what Google did not send (no token, a forged signature, another audience, another
/// package) with a clear error, stores nothing and changes nobody's balance; Google's own pushes are stored once.
@Suite("Google Play pushes refused and accepted")
struct GooglePlayPushTests {
    @Test("forged, misdirected and foreign pushes are refused and change nothing", arguments: TestDatabase.available)
    func refusals(database: TestDatabase) async throws {
        try await PlayHarness.run(database) { harness in
            let play = harness.play
            let server = harness.server
            let (_, obfuscated) = try await harness.order("coins_100", user: "gus")
            let account = await play.createAccount()
            _ = try await play.buy(productId: "coins_100", account: account.id, obfuscatedAccountId: obfuscated)
            let push = try #require(try await play.duePushes().first)
            let body = String(decoding: push.body, as: UTF8.self)
            func post(_ text: String, bearer: String?) async throws -> ServerHarness.Reply {
                var headers = [("Content-Type", "application/json")]
                if let bearer { headers.append(("Authorization", "Bearer \(bearer)")) }
                return try await server.call(.POST, "/google/rtdn", headers: headers, rawBody: text)
            }

            let none = try await post(body, bearer: nil)
            #expect(none.status == 422 && none.code == "invalid_push_token", "\(none.text)")
            #expect(none.text.contains("no Bearer token"))
            // The signature's last characters changed: not Google's.
            var forged = push.bearer
            forged.removeLast(4)
            forged += forged.hasSuffix("AAAA") ? "BBBB" : "AAAA"
            let badSignature = try await post(body, bearer: forged)
            #expect(badSignature.code == "invalid_push_token" && badSignature.text.contains("signature"), "\(badSignature.text)")
            // Google's token for another push endpoint (a misrouted subscription).
            await play.configurePush(
                .init(endpoint: push.endpoint, audience: "https://elsewhere.example/rtdn", serviceAccountEmail: PlayHarness.pushAccount)
            )
            let elsewhere = try #require(try await play.duePushes().first)
            let misdirected = try await post(body, bearer: elsewhere.bearer)
            #expect(misdirected.code == "invalid_push_token" && misdirected.text.contains("audience"), "\(misdirected.text)")
            // A genuine token on a body naming a package this server does not sell under.
            var envelope = try #require(try JSONSerialization.jsonObject(with: Data(push.body)) as? [String: Any])
            var message = try #require(envelope["message"] as? [String: Any])
            let data = try #require(message["data"] as? String)
            let payload = try #require(Data(base64Encoded: data))
            let foreignPayload = String(decoding: payload, as: UTF8.self).replacingOccurrences(of: PlayHarness.packageName, with: "com.example.other")
            message["data"] = Data(foreignPayload.utf8).base64EncodedString()
            envelope["message"] = message
            let foreignBody = String(decoding: try JSONSerialization.data(withJSONObject: envelope), as: UTF8.self)
            let foreign = try await post(foreignBody, bearer: push.bearer)
            #expect(foreign.code == "wrong_app" && foreign.outcome == "rejected", "\(foreign.text)")
            // Not JSON at all, with a genuine token.
            let malformed = try await post("{not json", bearer: push.bearer)
            #expect(malformed.code == "missing_fields", "\(malformed.text)")

            try await server.runJob("process-notifications", now: Date())
            #expect(try await harness.holdings("gus").coins == 0, "nothing refused was applied")
            let metrics = try await server.call(.GET, "/metrics", headers: ServerHarness.adminHeaders)
            #expect(metrics.text.contains("storekeeper_verification_failures_total{reason=\"play_notification_invalid_push_token\"} 3"))

            // Google's own push is stored and applied once, however often Pub/Sub redelivers it.
            let accepted = try await post(body, bearer: push.bearer)
            #expect(accepted.status == 200 && accepted["status"] as? String == "stored", "\(accepted.text)")
            let again = try await post(body, bearer: push.bearer)
            #expect(again.status == 200 && again["status"] as? String == "duplicate")
            try await server.runJob("process-notifications", now: Date())
            #expect(try await harness.holdings("gus").coins == 100, "delivered by the notification, to the order's user")
            let inbox = try await server.call(.GET, "/v1/admin/notifications/play:\(push.messageId)", headers: ServerHarness.adminHeaders)
            #expect(inbox.status == 200, "\(inbox.text)")
            #expect(inbox["body"] as? String == body, "stored byte for byte")
        }
    }
}
