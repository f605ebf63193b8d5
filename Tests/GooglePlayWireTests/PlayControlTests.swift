import Foundation
import GooglePlaySimulator
import GooglePlayWire
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The Play simulator's ground truth and faults over HTTP (`/control/...`), as scripts and operators read them: a
/// phone's purchase shows in the purchases, the books and the notifications, and faults set over HTTP fail the API.
@Suite("Google Play simulator: ground truth and faults over HTTP")
struct PlayControlTests {
    static func json(_ buffer: ByteBuffer) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any])
    }

    @Test func groundTruthAndFaults() async throws {
        let store = try SimulatedPlayStore()
        let app = Application(router: PlaySimulatorServer.buildRouter(store: store))
        try await app.test(.router) { client in
            let account = try await client.execute(uri: "/device/accounts", method: .post, body: ByteBuffer(string: "{}"))
            let id = try #require(try Self.json(account.body)["id"] as? String)
            let bought = try await client.execute(
                uri: "/device/purchases",
                method: .post,
                body: ByteBuffer(string: #"{"account": "\#(id)", "productId": "coins_100", "quantity": 2}"#)
            )
            #expect(bought.status == .created)
            let order = try #require(try Self.json(bought.body)["orderId"] as? String)
            let subscribed = try await client.execute(
                uri: "/device/purchases",
                method: .post,
                body: ByteBuffer(string: #"{"account": "\#(id)", "productId": "vip_monthly", "promoCode": "FREEMONTH"}"#)
            )
            #expect(subscribed.status == .created)

            let purchases = try #require(
                try Self.json(try await client.execute(uri: "/control/purchases", method: .get).body)["purchases"] as? [[String: Any]]
            )
            #expect(purchases.count == 1 && purchases[0]["orderId"] as? String == order && purchases[0]["quantity"] as? Int == 2)
            #expect(purchases[0]["state"] as? String == "PURCHASED" && purchases[0]["acknowledged"] as? Bool == false)
            let subscriptions = try #require(
                try Self.json(try await client.execute(uri: "/control/subscriptions", method: .get).body)["subscriptions"] as? [[String: Any]]
            )
            #expect(subscriptions.count == 1 && subscriptions[0]["state"] as? String == "SUBSCRIPTION_STATE_ACTIVE")
            let earnings = try #require(
                try Self.json(try await client.execute(uri: "/control/earnings", method: .get).body)["earnings"] as? [[String: Any]]
            )
            #expect(earnings.map { "\($0["type"] ?? "") \($0["amount"] ?? "")" } == ["Charge 1980", "Google fee -297"], "the promo month is free")
            let notifications = try #require(
                try Self.json(try await client.execute(uri: "/control/notifications", method: .get).body)["notifications"] as? [[String: Any]]
            )
            #expect(
                notifications.count == 2 && notifications[0]["oneTimeProductNotification"] != nil
                    && notifications[1]["subscriptionNotification"] != nil
            )

            let faulted = try await client.execute(uri: "/control/faults", method: .post, body: ByteBuffer(string: #"{"faults": ["reads"]}"#))
            #expect(faulted.status == .ok)
            #expect(await store.isFaulted(method: "GET", path: "/androidpublisher/v3/applications/x/purchases/products/y/tokens/z"))
            let unknown = try await client.execute(uri: "/control/faults", method: .post, body: ByteBuffer(string: #"{"faults": ["gremlins"]}"#))
            #expect(unknown.status == .badRequest)
            _ = try await client.execute(uri: "/control/faults", method: .post, body: ByteBuffer(string: #"{"faults": []}"#))
            #expect(await store.isFaulted(method: "GET", path: "/storage/v1/b/x/o") == false)
        }
    }
}
