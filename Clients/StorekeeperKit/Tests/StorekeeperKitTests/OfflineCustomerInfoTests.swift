#if os(Linux)
import Foundation
import StorekeeperAPI
import Testing

@testable import StorekeeperKit

import StoreKitStandIn

extension OnTheDevice {
    /// Customer info that lasts: the last signed answer is kept on disk, checked again at the next launch, and stands
    /// in for the server while it cannot be reached — each entitlement until its signed expiry and none beyond the
    /// maximum staleness — with StoreKit confirming what was bought meanwhile.
    @Suite struct OfflineCustomerInfoTests {
        static let chapter = "com.example.storekeeper.chapter.2"
        static let monthly = "com.example.storekeeper.membership.monthly"

        /// A server address nobody answers at (the server is down, or the network is).
        static func unreachableServer() throws -> URL { URL(string: "http://127.0.0.1:\(try DemoServer.freePort())")! }

        @Test func aKeptAnswerStandsInUntilItsSignedExpiryAndTheMaximumStaleness() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let policy = OfflinePolicy(maximumStaleness: 3_600)
                do {
                    let app = try Storekeeper(
                        serverURL: demo.serverURL,
                        journalURL: journal,
                        answers: try demo.answers(),
                        offline: policy,
                        log: .silent
                    ) {
                        credentials
                    }
                    #expect(try await app.purchase(Self.chapter) == .delivered)
                    #expect(try await app.purchase(Self.monthly) == .delivered)
                }
                let kept = journal.appendingPathExtension("customer-info")
                let mode = try FileManager.default.attributesOfItem(atPath: kept.path)[.posixPermissions] as? Int
                #expect(mode == 0o600, "the kept answer is the app's alone")

                // Relaunched with the server gone.
                let relaunched = try Storekeeper(
                    serverURL: try Self.unreachableServer(),
                    journalURL: journal,
                    answers: try demo.answers(),
                    offline: policy,
                    log: .silent
                ) {
                    credentials
                }
                let atLaunch = try #require(await relaunched.cachedCustomerInfo, "the kept answer is believed after its signature is checked again")
                #expect(atLaunch.verified && atLaunch.source == .kept)
                let info = try await relaunched.customerInfo()
                #expect(info.source == .kept, "the server is unreachable: the kept answer answers")
                #expect(info.isEntitled(to: "chapter.2") && info.isEntitled(to: "membership"))
                let membershipEnds = try #require(info.entitlements["membership"] ?? nil)
                #expect(!info.isEntitled(to: "membership", now: membershipEnds.addingTimeInterval(1)), "not past its signed expiry")
                #expect(info.isEntitled(to: "chapter.2", now: info.asOf.addingTimeInterval(3_599)))
                #expect(!info.isEntitled(to: "chapter.2", now: info.asOf.addingTimeInterval(3_601)), "not past the maximum staleness")

                // Another user on this device (signed in as someone else since): the kept answer is not theirs.
                let someoneElse = try await demo.api().createGuest().created.body.json.token
                let otherUser = try Storekeeper(
                    serverURL: try Self.unreachableServer(),
                    journalURL: journal,
                    answers: try demo.answers(),
                    offline: policy,
                    log: .silent
                ) {
                    .guest(someoneElse)
                }
                await #expect { try await otherUser.customerInfo() } throws: { ($0 as? StorekeeperError)?.code == .noCustomerInfo }

                // A refusal is not an outage: a server that answers 401 is not stood in for.
                let refused = try Storekeeper(
                    serverURL: demo.serverURL,
                    journalURL: journal,
                    answers: try demo.answers(),
                    offline: policy,
                    log: .silent
                ) {
                    .bearer("not-a-token")
                }
                await #expect { try await refused.customerInfo() } throws: { ($0 as? StorekeeperError)?.status == 401 }
            }
        }

        @Test func aTamperedKeptAnswerIsDroppedAtLaunch() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                do {
                    let app = try Storekeeper(serverURL: demo.serverURL, journalURL: journal, answers: try demo.answers(), log: .silent) {
                        credentials
                    }
                    #expect(try await app.purchase(Self.chapter) == .delivered)
                }
                let kept = journal.appendingPathExtension("customer-info")
                var answer = try JSONDecoder().decode(CustomerInfoCache.SignedAnswer.self, from: Data(contentsOf: kept))
                let text = try #require(String(data: answer.body, encoding: .utf8))
                answer.body = Data(text.replacingOccurrences(of: "\"chapter.2\"", with: "\"chapter.3\"").utf8)
                #expect(answer.body != Data(text.utf8))
                try JSONEncoder().encode(answer).write(to: kept)

                let messages = Messages()
                let relaunched = try Storekeeper(
                    serverURL: try Self.unreachableServer(),
                    journalURL: journal,
                    answers: try demo.answers(),
                    log: StorekeeperLog(level: .warning) { _, message in messages.append(message) }
                ) { credentials }
                #expect(await relaunched.cachedCustomerInfo == nil)
                #expect(!FileManager.default.fileExists(atPath: kept.path), "dropped")
                #expect(messages.all.contains { $0.contains("not believed") }, "\(messages.all)")
                await #expect { try await relaunched.customerInfo() } throws: { ($0 as? StorekeeperError)?.code == .noCustomerInfo }
            }
        }

        @Test func storeKitConfirmsASubscriptionBoughtWhileTheServerWasAway() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                do {
                    let app = try Storekeeper(serverURL: demo.serverURL, journalURL: journal, answers: try demo.answers(), log: .silent) {
                        credentials
                    }
                    #expect(try await app.purchase(Self.chapter) == .delivered)
                }
                // The user subscribes while the app cannot reach the server (StoreKit charges; nothing is delivered).
                let product = try #require(try await Product.products(for: [Self.monthly]).first)
                guard case .success = try await product.purchase(options: [.appAccountToken(UUID())]) else {
                    Issue.record("the App Store did not charge")
                    return
                }
                let offline = try Storekeeper(
                    serverURL: try Self.unreachableServer(),
                    journalURL: journal,
                    answers: try demo.answers(),
                    offline: OfflinePolicy(productEntitlements: [Self.monthly: "membership"]),
                    log: .silent
                ) { credentials }
                let info = try await offline.customerInfo()
                #expect(info.source == .keptAndStoreKit)
                #expect(info.confirmedByStoreKit == ["membership"])
                #expect(info.isEntitled(to: "membership") && info.isEntitled(to: "chapter.2"))
                // The server has not seen it: back online, the next launch delivers it and the server vouches.
                let online = try Storekeeper(serverURL: demo.serverURL, journalURL: journal, answers: try demo.answers(), log: .silent) {
                    credentials
                }
                try await online.resume()
                let fresh = try await online.customerInfo()
                #expect(fresh.source == .server && fresh.isEntitled(to: "membership") && fresh.confirmedByStoreKit.isEmpty)
            }
        }

        @Test func theUpdateStreamEmitsOnlyChangesAndFollowsListenerDeliveries() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let app = try Storekeeper(serverURL: demo.serverURL, journalURL: journal, answers: try demo.answers(), log: .silent) { credentials }
                try await app.start()
                defer { Task { await app.stop() } }
                let updates = await app.customerInfoUpdates()
                var iterator = updates.makeAsyncIterator()
                _ = try await app.customerInfo()
                _ = try await app.customerInfo()
                _ = try await app.customerInfo()
                #expect(await iterator.next()?.wallet["coins", default: 0] == 0)
                // An Ask to Buy approved while the app runs: the listener delivers it and the stream tells the app,
                // which did not ask.
                SimulatedDevice.requireAskToBuy(true)
                #expect(try await app.purchase(ListenerTests.coins) == .pending)
                try await ListenerTests.approve(demo, request: try #require(SimulatedDevice.askToBuyRequests().first))
                let next = await iterator.next()
                #expect(next?.wallet["coins"] == 60, "the delivery is streamed without polling")
            }
        }

        /// Collects log messages across tasks.
        final class Messages: @unchecked Sendable {
            private let lock = NSLock()
            private var messages: [String] = []
            func append(_ message: String) { lock.withLock { messages.append(message) } }
            var all: [String] { lock.withLock { messages } }
        }
    }
}
#endif
