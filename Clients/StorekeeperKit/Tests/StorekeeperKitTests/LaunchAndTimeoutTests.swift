#if os(Linux)
import Foundation
import OpenAPIURLSession
import StorekeeperAPI
import Testing

@testable import StorekeeperKit

import StoreKitStandIn

#if canImport(Glibc)
import Glibc
#endif

extension OnTheDevice {
    /// A launch retries what is kept at once, a held promoted purchase waits for the app, and no request waits forever
    /// (issue 30, item 18).
    @Suite struct LaunchAndTimeoutTests {
        @Test func aLaunchRetriesAKeptPurchaseAtOnceWhateverItsBackoff() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let network = ListenerTests.NetworkSwitch()
                network.down = true
                let offline = Storekeeper(
                    api: Client(
                        serverURL: demo.serverURL,
                        transport: URLSessionTransport(),
                        middlewares: [CredentialsMiddleware(credentials: { credentials }), network]
                    ),
                    journal: try PurchaseJournal(url: journal)
                )
                guard case .deliveringLater = try await offline.purchase(ListenerTests.coins) else {
                    Issue.record("a purchase without a network waits in the journal")
                    return
                }
                // Seven failed attempts later, the next one is ten minutes away.
                let kept = try PurchaseJournal(url: journal)
                let entry = try #require(await kept.all().first)
                for _ in 0..<7 {
                    try await kept.recordAttempt(entry.id, error: "offline", retryAt: Date().addingTimeInterval(600))
                }
                #expect(await kept.due(at: Date()).isEmpty)

                // The next launch, with the server back: delivered now, not in ten minutes.
                let relaunched = try Storekeeper(serverURL: demo.serverURL, journalURL: journal, answers: try demo.answers(), log: .silent) {
                    credentials
                }
                let settled = try await relaunched.resume()
                #expect(settled[entry.id]?.isDelivered == true, "submitted at launch: \(String(describing: settled[entry.id]))")
                #expect(try await PurchaseJournal(url: journal).all().isEmpty)
                #expect(try await KilledAppTests.coins(demo, credentials) == 60)
            }
        }

        @Test func aHeldPromotedPurchaseWaitsForTheApp() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let storekeeper = try Storekeeper(serverURL: demo.serverURL, journalURL: journal, answers: try demo.answers(), log: .silent) {
                    credentials
                }
                try await storekeeper.start { _ in false }
                defer { Task { await storekeeper.stop() } }
                let pack = "com.example.storekeeper.coins.300"
                try await SimulatedDevice.promote(pack)
                #expect(try await ListenerTests.eventually { await storekeeper.heldPromotedPurchases.map(\.productId) == [pack] })
                #expect(try await KilledAppTests.coins(demo, credentials) == 0, "held, not bought")
                // The user signed in: the app buys it.
                #expect(try await storekeeper.purchaseHeldPromotion(pack) == .delivered)
                #expect(await storekeeper.heldPromotedPurchases.isEmpty)
                #expect(try await KilledAppTests.coins(demo, credentials) == 300)
                await #expect { try await storekeeper.purchaseHeldPromotion(pack) } throws: {
                    ($0 as? StorekeeperError)?.code == .productUnavailable
                }
                // Declined: dropped.
                try await SimulatedDevice.promote(ListenerTests.coins)
                #expect(try await ListenerTests.eventually { await storekeeper.heldPromotedPurchases.count == 1 })
                await storekeeper.dropHeldPromotion(ListenerTests.coins)
                #expect(await storekeeper.heldPromotedPurchases.isEmpty)
            }
        }

        @Test func aServerThatNeverAnswersCostsTheRequestTimeout() async throws {
            // Takes connections (the kernel's backlog) and never answers.
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(descriptor) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let listening = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                    bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0 && listen(descriptor, 16) == 0
                }
            }
            try #require(listening)
            let silent = URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))")!
            let journal = FileManager.default.temporaryDirectory.appendingPathComponent("sk-kit-silent-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: journal) }
            let storekeeper = try Storekeeper(serverURL: silent, journalURL: journal, answers: nil, log: .silent, requestTimeout: .seconds(1)) {
                .guest("any")
            }
            await #expect { try await storekeeper.introductoryOfferEligibility() } throws: { ($0 as? StorekeeperError)?.code == .network }
            await #expect { try await storekeeper.customerInfo() } throws: { ($0 as? StorekeeperError)?.code == .noCustomerInfo }
        }
    }
}
#endif
