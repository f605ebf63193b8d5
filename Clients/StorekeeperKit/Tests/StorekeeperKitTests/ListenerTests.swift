#if os(Linux)
// Plays an iPhone through the StoreKit stand-in against a real `storekeeper demo`: Linux only.
import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import StorekeeperAPI
import Testing

@testable import StorekeeperKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif

extension OnTheDevice {
    /// Transactions that do not come from the app's own `purchase()`: Ask to Buy approvals (with the app closed and
    /// while it runs) and promoted in-app purchases, through `start()`'s listeners and the next launch's `resume()`.
    @Suite struct ListenerTests {
        static let coins = "com.example.storekeeper.coins.60"

        /// Polls `condition` for up to 15 s.
        static func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
            for _ in 0..<150 {
                if try await condition() { return true }
                try await Task.sleep(for: .milliseconds(100))
            }
            return false
        }

        static func approve(_ demo: DemoServer, request: String) async throws {
            var approval = URLRequest(url: demo.simulatorURL.appendingPathComponent("device/ask-to-buy/\(request)/approve"))
            approval.httpMethod = "POST"
            let (_, response) = try await URLSession.shared.data(for: approval)
            #expect((response as? HTTPURLResponse)?.statusCode == 201)
        }

        @Test func anAskToBuyApprovedWhileTheAppIsClosedIsDeliveredAtNextLaunch() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                SimulatedDevice.requireAskToBuy(true)
                do {
                    let storekeeper = try Storekeeper(serverURL: demo.serverURL, journalURL: journal, answers: try demo.answers()) { credentials }
                    #expect(try await storekeeper.purchase(Self.coins) == .pending)
                }
                // The app is gone; the parent approves on their own device.
                let request = try #require(SimulatedDevice.askToBuyRequests().first)
                try await Self.approve(demo, request: request)

                let relaunched = try Storekeeper(serverURL: demo.serverURL, journalURL: journal, answers: try demo.answers()) { credentials }
                let settled = try await relaunched.resume()
                #expect(settled.count == 1)
                #expect(settled.values.allSatisfy { $0.isDelivered }, "\(settled)")
                #expect(try await relaunched.customerInfo().wallet["coins"] == 60)
                #expect(SimulatedDevice.finishCalls().map(String.init) == Array(settled.keys))
                let orders = try await demo.api(credentials).getMe().ok.body.json.orders
                #expect(orders.map(\.status) == [.delivered], "the pending order is the one delivered")
            }
        }

        @Test func anAskToBuyApprovedWhileTheAppRunsArrivesThroughUpdates() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let storekeeper = try Storekeeper(serverURL: demo.serverURL, journalURL: journal, answers: try demo.answers()) { credentials }
                try await storekeeper.start()
                defer { Task { await storekeeper.stop() } }
                SimulatedDevice.requireAskToBuy(true)
                #expect(try await storekeeper.purchase(Self.coins) == .pending)
                try await Self.approve(demo, request: try #require(SimulatedDevice.askToBuyRequests().first))

                #expect(try await Self.eventually { try await storekeeper.customerInfo().wallet["coins"] == 60 })
                #expect(try await Self.eventually { SimulatedDevice.finishCalls().count == 1 })
                try await Task.sleep(for: .milliseconds(500))
                #expect(SimulatedDevice.finishCalls().count == 1, "finished once")
                #expect(try await storekeeper.customerInfo().wallet["coins"] == 60, "credited once")
            }
        }

        /// The device's network to the server for submissions: cut while `down`.
        final class NetworkSwitch: ClientMiddleware, @unchecked Sendable {
            private let lock = NSLock()
            private var isDown = false
            private var refused = 0
            var down: Bool {
                get { lock.withLock { isDown } }
                set { lock.withLock { isDown = newValue } }
            }
            var refusals: Int { lock.withLock { refused } }

            func intercept(
                _ request: HTTPRequest,
                body: HTTPBody?,
                baseURL: URL,
                operationID: String,
                next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
            ) async throws -> (HTTPResponse, HTTPBody?) {
                let cut =
                    operationID == "submitPurchase"
                    && lock.withLock { () -> Bool in
                        if isDown { refused += 1 }
                        return isDown
                    }
                if cut { throw URLError(.notConnectedToInternet) }
                return try await next(request, body, baseURL)
            }
        }

        @Test func whileTheServerIsUnreachableThePurchaseWaitsThenIsDeliveredByItself() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let network = NetworkSwitch()
                let api = Client(
                    serverURL: demo.serverURL,
                    transport: URLSessionTransport(),
                    middlewares: [CredentialsMiddleware(credentials: { credentials }), network]
                )
                let storekeeper = Storekeeper(
                    api: api,
                    journal: try PurchaseJournal(url: journal),
                    retry: RetryPolicy(base: .milliseconds(200), cap: .milliseconds(400))
                )
                try await storekeeper.start()
                defer { Task { await storekeeper.stop() } }
                network.down = true
                guard case .deliveringLater = try await storekeeper.purchase(Self.coins) else {
                    Issue.record("a purchase without a network must wait in the journal")
                    return
                }
                #expect(try await Self.eventually { network.refusals >= 3 }, "retried with backoff while running")
                #expect(SimulatedDevice.finishCalls().isEmpty, "never finished before the server answered")

                network.down = false
                #expect(try await Self.eventually { SimulatedDevice.finishCalls().count == 1 }, "delivered once the network is back")
                #expect(try await storekeeper.customerInfo().wallet["coins"] == 60)
                #expect(try await PurchaseJournal(url: journal).all().isEmpty)
            }
        }

        @Test func aPromotedPurchaseRunsThePurchaseFlow() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let storekeeper = try Storekeeper(serverURL: demo.serverURL, journalURL: journal, answers: try demo.answers()) { credentials }
                let offered = Offered()
                try await storekeeper.start { productId in await offered.allow(productId) }
                defer { Task { await storekeeper.stop() } }

                // Held by the app (say, until the user signs in): nothing is bought.
                try await SimulatedDevice.promote("com.example.storekeeper.coins.300")
                #expect(try await Self.eventually { await offered.seen == ["com.example.storekeeper.coins.300"] })
                try await SimulatedDevice.promote(Self.coins)
                #expect(try await Self.eventually { try await storekeeper.customerInfo().wallet["coins"] == 60 })
                let orders = try await demo.api(credentials).getMe().ok.body.json.orders
                #expect(orders.map(\.productId) == [Self.coins])
                #expect(orders.map(\.status) == [.delivered])
            }
        }

        /// The app's answer to a promoted purchase: the 60-coin pack goes ahead, anything else waits.
        actor Offered {
            var seen: [String] = []
            func allow(_ productId: String) -> Bool {
                seen.append(productId)
                return productId == ListenerTests.coins
            }
        }
    }
}
#endif
