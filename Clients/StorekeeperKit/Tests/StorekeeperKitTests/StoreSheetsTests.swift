#if os(Linux)
import Foundation
import StorekeeperAPI
import Testing

@testable import StorekeeperKit

import StoreKitStandIn

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension OnTheDevice {
    /// The App Store's own sheets through the SDK, against the simulator: offer-code redemption (iOS 27 returns the
    /// transaction, delivered to the signed-in user and bound to them at Apple), refund request, subscription
    /// management; and the StoreKit products a paywall shows, in the customer's storefront.
    @Suite struct StoreSheetsTests {
        static let monthly = "com.example.storekeeper.membership.monthly"

        @Test func aRedeemedOfferCodeIsDeliveredToTheSignedInUserAndBoundAtApple() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let app = try Storekeeper(serverURL: demo.serverURL, journalURL: journal, answers: try demo.answers(), log: .silent) { credentials }
                SimulatedDevice.enterOfferCode("FRIENDS", productID: Self.monthly)
                let outcome = try await app.redeemOfferCode(from: await UIViewController())
                #expect(outcome == .delivered)
                #expect(SimulatedDevice.sheetsShown() == ["offerCodeRedemption"])
                let info = try #require(await app.cachedCustomerInfo, "refreshed after the delivery")
                #expect(info.isEntitled(to: "membership"))
                let transaction = try #require(info.user.transactions.first { $0.productId == Self.monthly })
                #expect(SimulatedDevice.finishCalls().map(String.init) == [transaction.transactionId], "finished after the server's answer")
                // The server binds the tokenless transaction to the user at Apple (Set App Account Token).
                let bound = try await ListenerTests.eventually {
                    try await Self.appAccountToken(demo, transactionId: transaction.transactionId) != nil
                }
                #expect(bound, "the transaction carries the user's app account token at Apple")

                // Closing the sheet is no purchase.
                #expect(try await app.redeemOfferCode(from: await UIViewController()) == nil)
            }
        }

        @Test func theRefundAndManagementSheetsAreShown() async throws {
            try await DemoServer.run { demo in
                let (credentials, journal, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let app = try Storekeeper(serverURL: demo.serverURL, journalURL: journal, answers: try demo.answers(), log: .silent) { credentials }
                #expect(try await app.purchase(ListenerTests.coins) == .delivered)
                let transaction = try #require(try await app.customerInfo().user.transactions.first)
                let scene = await UIWindowScene()
                #expect(try await app.requestRefund(for: transaction.transactionId, in: scene))
                try await app.showManageSubscriptions(in: scene)
                #expect(SimulatedDevice.sheetsShown() == ["refundRequest:\(transaction.transactionId)", "manageSubscriptions"])
                await #expect { try await app.requestRefund(for: "not-a-number", in: scene) } throws: { $0 is StorekeeperError }
            }
        }

        @Test func storeKitProductsCarryTheStorefrontsPricesAndTheCustomersOffers() async throws {
            try await DemoServer.run { demo in
                let (_, _, storage) = try await StorekeeperFlowTests.device(demo)
                defer { try? FileManager.default.removeItem(at: storage) }
                let products = try await Product.products(for: [Self.monthly, ListenerTests.coins, "com.example.unknown"])
                #expect(products.map(\.id).sorted() == [ListenerTests.coins, Self.monthly], "an unknown id is left out")
                let monthly = try #require(products.first { $0.id == Self.monthly })
                #expect(monthly.type == .autoRenewable && monthly.price == Decimal(string: "9.99") && monthly.displayPrice == "$9.99")
                let subscription = try #require(monthly.subscription)
                #expect(subscription.subscriptionGroupID == "21000001")
                #expect(subscription.subscriptionPeriod.unit == .month && subscription.subscriptionPeriod.value == 1)
                #expect(subscription.introductoryOffer?.paymentMode == .freeTrial && subscription.introductoryOffer?.id == nil)
                #expect(subscription.promotionalOffers.map(\.id) == ["winback-50"])
                #expect(subscription.promotionalOffers.first?.displayPrice == "$4.99")
                #expect(await subscription.isEligibleForIntroOffer)
                #expect(subscription.winBackOffers.isEmpty, "not a lapsed subscriber")
                let coins = try #require(products.first { $0.id == ListenerTests.coins })
                #expect(coins.type == .consumable && coins.subscription == nil && coins.displayPrice == "$0.99")
            }
        }

        /// The transaction's `appAccountToken` as the App Store now signs it.
        static func appAccountToken(_ demo: DemoServer, transactionId: String) async throws -> String? {
            let account = try #require(SimulatedDevice.signedInAccount)
            let url = demo.simulatorURL.appendingPathComponent("device/accounts/\(account)/transactions")
            let (data, _) = try await URLSession.shared.data(from: url)
            let signed = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])["signedTransactions"] as? [String]
            for jws in signed ?? [] {
                let payload = try #require(jws.split(separator: ".").dropFirst().first)
                var base64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
                base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
                let decoded = try #require(Data(base64Encoded: base64))
                let claims = try #require(try JSONSerialization.jsonObject(with: decoded) as? [String: Any])
                if claims["transactionId"] as? String == transactionId { return claims["appAccountToken"] as? String }
            }
            return nil
        }
    }
}
#endif
