#if os(Linux)
// Plays an iPhone through the StoreKit stand-in against a real `storekeeper demo`: Linux only.
import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import StorekeeperAPI
import Testing

@testable import StorekeeperKit

#if canImport(StoreKit)
import StoreKit
#else
import StoreKitStandIn
#endif
extension OnTheDevice {
    /// The whole purchase as an app makes it — order, StoreKit's sheet, journal, server, `finish()` — through the
    /// StoreKit adapter, against a real `storekeeper demo` (on Linux StoreKit is the stand-in, backed by its simulator).
    @Suite struct StorekeeperFlowTests {
        static let coins = "com.example.storekeeper.coins.60"

        /// A device signed in to a fresh simulator account, and a guest on the server.
        static func device(_ demo: DemoServer) async throws -> (credentials: Credentials, journal: URL, storage: URL) {
            let storage = FileManager.default.temporaryDirectory.appendingPathComponent("sk-kit-device-\(UUID().uuidString)")
            try SimulatedDevice.configure(simulatorURL: demo.simulatorURL, account: try await demo.newAccount(), storage: storage)
            let guest = try await demo.api().createGuest().created.body.json
            return (.guest(guest.token), storage.appendingPathComponent("journal.json"), storage)
        }

        static func unfinishedCount() async -> Int {
            var count = 0
            for await _ in Transaction.unfinished { count += 1 }
            return count
        }

        static func coins(_ demo: DemoServer, _ credentials: Credentials) async throws -> Int64 {
            try await demo.api(credentials).getMe().ok.body.json.wallet.additionalProperties["coins"] ?? 0
        }

        // MARK: Tests

        @Test func aPurchaseIsDeliveredThenFinished() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await Self.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let storekeeper = try Storekeeper(serverURL: demo.serverURL, journalURL: journal, answers: try demo.answers()) { credentials }
                #expect(try await storekeeper.purchase(Self.coins) == .delivered)
                #expect(try await Self.coins(demo, credentials) == 60)
                #expect(await Self.unfinishedCount() == 0, "finished once delivered")
                #expect(try await PurchaseJournal(url: journal).all().isEmpty)
                let orders = try await demo.api(credentials).getMe().ok.body.json.orders
                #expect(orders.map(\.status) == [.delivered])
            }
        }

        /// Beyond StoreKit's own traffic, a purchase costs the app two calls to the server — the order and the submit —
        /// and a third once it is delivered: customer info refreshed for the app's update stream.
        @Test func aPurchaseCostsTwoRoundTripsAndARefresh() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await Self.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let calls = CallLog()
                let api = Client(
                    serverURL: demo.serverURL,
                    transport: URLSessionTransport(),
                    middlewares: [calls, CredentialsMiddleware(credentials: { credentials })]
                )
                let storekeeper = Storekeeper(api: api, journal: try PurchaseJournal(url: journal))
                #expect(try await storekeeper.purchase(Self.coins) == .delivered)
                #expect(calls.operations == ["createOrder", "submitPurchase", "getMe"])
            }
        }

        /// Records the operations a generated client sends.
        final class CallLog: ClientMiddleware, @unchecked Sendable {
            private let lock = NSLock()
            private var seen: [String] = []
            var operations: [String] { lock.withLock { seen } }

            func intercept(
                _ request: HTTPRequest,
                body: HTTPBody?,
                baseURL: URL,
                operationID: String,
                next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
            ) async throws -> (HTTPResponse, HTTPBody?) {
                lock.withLock { seen.append(operationID) }
                return try await next(request, body, baseURL)
            }
        }

        @Test func aCancelledPurchaseCancelsItsOrder() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await Self.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let storekeeper = try Storekeeper(serverURL: demo.serverURL, journalURL: journal, answers: try demo.answers()) { credentials }
                SimulatedDevice.cancelNextPurchase()
                #expect(try await storekeeper.purchase(Self.coins) == .cancelled)
                let orders = try await demo.api(credentials).getMe().ok.body.json.orders
                #expect(orders.map(\.status) == [.cancelled])
                #expect(try await Self.coins(demo, credentials) == 0)
            }
        }

        /// Apple charged, then the app died before it wrote or sent anything: StoreKit still holds the transaction
        /// unfinished, and the next launch delivers it once and finishes it.
        @Test func aChargeTheAppDiedAfterIsDeliveredAtNextLaunch() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await Self.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let order = try await demo.api(credentials).createOrder(body: .json(.init(productId: Self.coins))).created.body.json
                let product = try #require(try await Product.products(for: [Self.coins]).first)
                guard case .success = try await product.purchase(options: [.appAccountToken(try #require(UUID(uuidString: order.appAccountToken)))])
                else {
                    Issue.record("the simulated App Store did not charge")
                    return
                }
                #expect(await Self.unfinishedCount() == 1)

                let relaunched = try Storekeeper(serverURL: demo.serverURL, journalURL: journal, answers: try demo.answers()) { credentials }
                let settled = try await relaunched.resume()
                // Delivered by this launch, or already by Apple's notification (attributed by the order's token).
                #expect(settled.count == 1 && settled.values.allSatisfy { $0.isDelivered }, "\(settled)")
                #expect(try await Self.coins(demo, credentials) == 60)
                #expect(await Self.unfinishedCount() == 0)
                #expect(try await relaunched.resume().isEmpty, "a second launch has nothing to do")
                #expect(try await Self.coins(demo, credentials) == 60)
            }
        }
    }
}
#endif
