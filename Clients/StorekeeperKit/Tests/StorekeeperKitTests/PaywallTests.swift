#if os(Linux)
import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import StorekeeperAPI
import Synchronization
import Testing

@testable import StorekeeperKit

import StoreKitStandIn

extension OnTheDevice {
    /// Paywall data: the server's catalog for the user joined with StoreKit's products (the stand-in's, from the
    /// simulator), cached with an ETag; packages bought at the user's campaign offer; the variant sold once the
    /// trial is used.
    @Suite struct PaywallTests {
        static let monthly = "com.example.storekeeper.membership.monthly"
        static let standard = "com.example.storekeeper.membership.monthly.standard"
        static let yearly = "com.example.storekeeper.membership.yearly"

        /// Records each operation's status, and fails every request like a lost network while `offline` is set.
        final class Wire: ClientMiddleware, Sendable {
            let calls = Mutex<[(operation: String, status: Int)]>([])
            let offline = Mutex(false)

            func intercept(
                _ request: HTTPRequest,
                body: HTTPBody?,
                baseURL: URL,
                operationID: String,
                next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
            ) async throws -> (HTTPResponse, HTTPBody?) {
                if offline.withLock({ $0 }) { throw URLError(.notConnectedToInternet) }
                let (response, answer) = try await next(request, body, baseURL)
                calls.withLock { $0.append((operationID, response.status.code)) }
                return (response, answer)
            }

            func statuses(of operation: String) -> [Int] { calls.withLock { $0.filter { $0.operation == operation }.map(\.status) } }
        }

        static func app(_ demo: DemoServer, _ credentials: Credentials, journal: URL, wire: Wire) throws -> Storekeeper {
            let client = Client(
                serverURL: demo.serverURL,
                transport: URLSessionTransport(),
                middlewares: [CredentialsMiddleware { credentials }, wire]
            )
            return Storekeeper(api: client, journal: try PurchaseJournal(url: journal), answers: try demo.answers())
        }

        /// A device whose guest the server's running campaign puts in the variant with (or without) the offer.
        static func device(_ demo: DemoServer, granted: Bool) async throws -> (credentials: Credentials, journal: URL, storage: URL) {
            for _ in 0..<40 {
                let device = try await StorekeeperFlowTests.device(demo)
                // The server's own answer: it signs the campaign's offer only for the variant that has it.
                let signing = try await demo.api(device.credentials).signOffer(body: .json(.init(productId: Self.monthly, offerId: "winback-50")))
                if case .ok = signing, granted { return device }
                if case .forbidden = signing, !granted { return device }
                try? FileManager.default.removeItem(at: device.storage)
            }
            throw StorekeeperError(.server, message: "no guest in the \(granted ? "offer" : "control") variant in 40 tries")
        }

        @Test func offeringsJoinTheCatalogWithStoreKitsProductsAndAreCachedWithAnETag() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await Self.device(demo, granted: true)
                defer { try? FileManager.default.removeItem(at: storage) }
                let wire = Wire()
                let app = try Self.app(demo, credentials, journal: journal, wire: wire)
                let offerings = try await app.offerings()

                #expect(offerings.unavailable.isEmpty)
                let coins = try #require(offerings.product(ListenerTests.coins))
                #expect(coins.kind == .consumable && coins.coins == 60 && coins.displayPrice == "$0.99" && coins.subscriptionPeriod == nil)
                let pass = try #require(offerings.product("com.example.storekeeper.pass.month"))
                #expect(pass.kind == .nonRenewing && pass.entitlement == "pass" && pass.duration == "P1M")

                let membership = try #require(offerings.current)
                #expect(membership.id == "21000001" && membership.introductoryOfferEligible)
                #expect(membership.packages.map(\.id) == [Self.yearly, Self.monthly], "highest service first; the variant is no package")
                let yearly = membership.packages[0]
                #expect(yearly.product.displayPrice == "$99.99" && yearly.product.subscriptionPeriod?.unit == .year && yearly.offer == nil)
                let monthly = membership.packages[1]
                #expect(monthly.product.id == Self.monthly && monthly.product.entitlement == "membership" && monthly.product.level == 2)
                #expect(monthly.product.isEligibleForIntroOffer && monthly.product.introductoryOffer?.paymentMode == .freeTrial)
                #expect(monthly.product.promotionalOffers.map(\.id) == ["winback-50"])
                #expect(monthly.offer == nil, "the campaign grants this guest's variant an offer, but only subscribers may take one")
                #expect(offerings["21000002"]?.packages.map(\.product.displayName).count == 2)

                // Asked again: the server answers 304 to the held tag, and the paywall is the same.
                #expect(try await app.offerings() == offerings)
                #expect(wire.statuses(of: "getCatalog") == [200, 304])
                // Without a network, the held catalog still builds the paywall (StoreKit's products are local).
                wire.offline.withLock { $0 = true }
                #expect(try await app.offerings() == offerings)
                wire.offline.withLock { $0 = false }
                #expect(try await app.products().map(\.id) == offerings.products.map(\.id))
                // A fresh app holds nothing: the same catalog again, 200.
                let fresh = try Self.app(demo, credentials, journal: journal, wire: wire)
                #expect(try await fresh.offerings() == offerings)
                #expect(wire.statuses(of: "getCatalog") == [200, 304, 304, 200])
            }
        }

        @Test func aLapsedSubscriberBuysThePackageAtTheirCampaignOffer() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await Self.device(demo, granted: true)
                defer { try? FileManager.default.removeItem(at: storage) }
                let app = try Self.app(demo, credentials, journal: journal, wire: Wire())
                let trial = try #require(try await app.offerings().current?.packages.first { $0.id == Self.monthly })
                #expect(try await app.purchase(trial) == .delivered)
                let first = try #require(try await app.customerInfo().user.transactions.first)
                // Cancelled in Settings; the trial week runs out.
                try await demo.setAutoRenew(original: first.originalTransactionId, enabled: false)
                try await demo.advanceClock("P8D")

                let package = try #require(try await app.offerings().current?.packages.first { $0.id == Self.monthly })
                #expect(package.product.id == Self.standard, "no second trial")
                let offer = try #require(package.offer, "a lapsed subscriber in the offer variant")
                #expect(offer.campaignId == "winback-2026" && offer.variant == "offer" && offer.offerId == "winback-50")
                #expect(offer.storeKitOffer.displayPrice == "$4.99" && offer.storeKitOffer.periodCount == 3)
                #expect(try await app.purchase(package) == .delivered)
                let transactions = try await app.customerInfo().user.transactions
                let back = try #require(transactions.first { $0.productId == Self.standard })
                #expect(back.offerId == "winback-50", "bought at the offer the server signed for this user")
            }
        }

        @Test func onceTheTrialIsUsedThePaywallSellsTheVariantWithoutOne() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await Self.device(demo, granted: false)
                defer { try? FileManager.default.removeItem(at: storage) }
                let wire = Wire()
                let app = try Self.app(demo, credentials, journal: journal, wire: wire)
                let before = try #require(try await app.offerings().current)
                let monthly = try #require(before.packages.first { $0.id == Self.monthly })
                #expect(monthly.offer == nil, "the control group has no offer")
                #expect(try await app.purchase(monthly) == .delivered)
                let transaction = try #require(try await app.customerInfo().user.transactions.first)
                #expect(transaction.offerDiscountType == "FREE_TRIAL", "the trial was taken")

                let after = try #require(try await app.offerings().current)
                #expect(!after.introductoryOfferEligible)
                let package = try #require(after.packages.first { $0.id == Self.monthly })
                #expect(package.product.id == Self.standard, "the same service, sold without a trial")
                #expect(!package.product.isEligibleForIntroOffer && package.product.introductoryOffer == nil)
                #expect(wire.statuses(of: "getCatalog") == [200, 200], "the eligibility change is a new tag")
                #expect(after.packages.map(\.id) == [Self.yearly, Self.monthly], "yearly has no trial: still sold as itself")
                #expect(after.packages[0].product.id == Self.yearly)
            }
        }
    }
}
#endif
