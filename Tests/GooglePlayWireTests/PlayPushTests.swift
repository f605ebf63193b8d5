import AsyncHTTPClient
import Foundation
import GooglePlaySimulator
import GooglePlayWire
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

/// Real-time developer notifications from the Play simulator, pushed as Pub/Sub does — an envelope with base64 data,
/// a signed OIDC token, redelivery under the same `messageId` until a 2xx — to a receiver that verifies each token
/// with `PushTokenVerifier` against the simulator's published keys, over sockets.
@Suite struct PlayPushTests {
    static let pushAccount = "play-push@sim.iam.gserviceaccount.com"

    final class Receiver: Sendable {
        struct State {
            var received: [(messageId: String, notification: DeveloperNotification)] = []
            var refused: [String] = []
            var failOnce: Set<String> = []
            var failedOnce: Set<String> = []
        }
        let state = Mutex(State())
        let clockOffset = Mutex<TimeInterval>(0)
    }

    @Test func notificationsArePushedVerifiedAndRedeliveredUntilAcknowledged() async throws {
        let store = try SimulatedPlayStore()
        let simulator = PlaySimulatorServer.buildApplication(store: store, port: 0)
        try await simulator.test(.live) { simulatorClient in
            let simulatorPort = try #require(simulatorClient.port)
            let receiver = Receiver()
            let router = Router()
            let transport = AsyncHTTPPlayTransport(client: .shared)
            let endpoint = Mutex("")
            let verifier = Mutex<PushTokenVerifier?>(nil)
            router.post("google/rtdn") { request, _ -> Response in
                guard let verifier = verifier.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
                do {
                    _ = try await verifier.verify(authorization: request.headers[.authorization])
                } catch {
                    receiver.state.withLock { $0.refused.append("\(error)") }
                    return Response(status: .unauthorized)
                }
                let body = try await request.body.collect(upTo: 1 << 20)
                let push = try PlayJSON.decode(PubSubPushRequest.self, from: Array(body.readableBytesView))
                let id = push.message.messageId ?? ""
                let fail = receiver.state.withLock { state -> Bool in
                    if state.failOnce.contains(id), !state.failedOnce.contains(id) {
                        state.failedOnce.insert(id)
                        return true
                    }
                    return false
                }
                if fail { return Response(status: .internalServerError) }
                let notification = try push.developerNotification()
                receiver.state.withLock { $0.received.append((id, notification)) }
                return Response(status: .noContent)
            }
            try await Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0))).test(.live) { receiverClient in
                let url = "http://127.0.0.1:\(try #require(receiverClient.port))/google/rtdn"
                endpoint.withLock { $0 = url }
                verifier.withLock {
                    $0 = PushTokenVerifier(
                        audience: url,
                        serviceAccountEmail: Self.pushAccount,
                        certsURL: "http://127.0.0.1:\(simulatorPort)/oauth2/v1/certs",
                        transport: transport,
                        clock: { Date().addingTimeInterval(receiver.clockOffset.withLock { $0 }) }
                    )
                }
                await store.configurePush(.init(endpoint: url, serviceAccountEmail: Self.pushAccount))
                let sender = PlayPushSender(store: store, transport: transport)

                let account = await store.createAccount()
                let coins = try await store.buy(productId: "coins_100", account: account.id, quantity: 2)
                let pending = try await store.buy(productId: "lifetime_pro", account: account.id, pending: true)
                try await store.cancelPending(pending.token)
                try await store.refund(packageName: PlayCatalog.sample.packageName, orderId: coins.orderId, revoke: true, quantity: 1)
                let queued = await store.pendingPushes()
                #expect(queued.count == 3, "purchased, pending canceled, partially refunded (a pending purchase is not announced)")
                receiver.state.withLock { $0.failOnce = [queued[1].messageId] }

                #expect(try await sender.deliverDue() == 2)
                #expect(await store.pendingPushes().map(\.messageId) == [queued[1].messageId])
                #expect(try await sender.deliverDue() == 0, "not due again before Pub/Sub's back-off")
                await store.advance(by: 10)
                #expect(try await sender.deliverDue() == 1)
                #expect(await store.pendingPushes().isEmpty)

                let received = receiver.state.withLock { $0.received }
                #expect(received.map(\.messageId).sorted() == queued.map(\.messageId).sorted(), "each message once, the failed one under its own id")
                let contents = received.sorted { $0.messageId < $1.messageId }.map(\.notification.content)
                #expect(contents[0] == .oneTimeProduct(.init(notificationType: .purchased, purchaseToken: coins.token, sku: "coins_100")))
                #expect(contents[1] == .oneTimeProduct(.init(notificationType: .canceled, purchaseToken: pending.token, sku: "lifetime_pro")))
                #expect(
                    contents[2]
                        == .voidedPurchase(
                            .init(purchaseToken: coins.token, orderId: coins.orderId, productType: .oneTime, refundType: .quantityBasedPartialRefund)
                        )
                )
                #expect(received.allSatisfy { $0.notification.packageName == PlayCatalog.sample.packageName })
                #expect(receiver.state.withLock { $0.refused }.isEmpty)

                // Google rotates its key: the receiver fetches the keys again once a minute has passed since it last did.
                try await store.rotatePushKey()
                let unlock = try await store.buy(productId: "lifetime_pro", account: account.id)
                #expect(try await sender.deliverDue() == 0)
                #expect(receiver.state.withLock { $0.refused.last?.contains("is not one of Google's keys") } == true)
                receiver.clockOffset.withLock { $0 = 61 }
                await store.advance(by: 10)
                #expect(try await sender.deliverDue() == 1)
                #expect(receiver.state.withLock { $0.received.last?.notification.purchaseToken } == unlock.token)

                // A push for another audience (a misrouted subscription) is refused.
                await store.configurePush(.init(endpoint: url, audience: "https://elsewhere.example/rtdn", serviceAccountEmail: Self.pushAccount))
                _ = try await store.buy(productId: "coins_100", account: account.id)
                #expect(try await sender.deliverDue() == 0)
                #expect(receiver.state.withLock { $0.refused.last } == "push token refused: audience is not \(url)")
            }
        }
    }
}
