import AppStoreSimulator
import AppStoreWire
import Crypto
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperCore
import StorekeeperServer
import Testing

/// Legacy receipts: lost orders recovered, verifyReceipt's answers, and the intro-offer and offer-signature rules.
@Suite("Receipts, eligibility and offers end to end")
struct RecoveryTests {
    // MARK: Tests

    @Test("a receipt with five never-delivered purchases delivers exactly those five, once", arguments: TestDatabase.available)
    func receiptRecovery(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let account = try await server.store.createAccount().id
            let (_, first) = try await server.orderAndBuy(PurchaseFlowTests.chapter, user: "ivy", account: account)
            _ = try await server.submit(first.signedTransaction, headers: ServerHarness.userHeaders("ivy"))
            var lost: [String] = []
            for product in [
                PurchaseFlowTests.coins, PurchaseFlowTests.coins, PurchaseFlowTests.pass, PurchaseFlowTests.yearly,
                "com.example.storekeeper.coins.300",
            ] {
                lost.append(try await server.store.purchase(productId: product, account: account).transaction.transactionId!)
            }
            let receipt = try await server.receipt(account: account)
            let reply = try await server.call(.POST, "/v1/purchases", json: ["receipt": receipt], headers: ServerHarness.userHeaders("ivy"))
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.outcome == "delivered")
            let deliveries = try #require(reply["deliveries"] as? [[String: Any]])
            let fresh = deliveries.filter { $0["alreadyDelivered"] as? Bool == false }.compactMap { $0["transactionId"] as? String }
            #expect(Set(fresh) == Set(lost))
            #expect(deliveries.count == 6)
            #expect(try await server.coins("ivy") == 420)

            let again = try await server.call(.POST, "/v1/purchases", json: ["receipt": receipt], headers: ServerHarness.userHeaders("ivy"))
            let repeated = try #require(again["deliveries"] as? [[String: Any]])
            #expect(repeated.allSatisfy { $0["alreadyDelivered"] as? Bool == true })
            #expect(try await server.coins("ivy") == 420)
        }
    }

    @Test("verifyReceipt answering 21005 means retry with nothing delivered, then delivery on the next try")
    func verifyReceiptBusy() async throws {
        try await ServerHarness.run(.sqlite) { server in
            let account = try await server.store.createAccount().id
            let purchase = try await server.store.purchase(productId: PurchaseFlowTests.coins, account: account)
            let receipt = try await server.receipt(account: account)
            server.faults.settings = .init(verifyReceiptStatuses: [21005])
            let busy = try await server.call(
                .POST,
                "/v1/purchases",
                json: ["receipt": receipt, "transactionId": purchase.transaction.transactionId!],
                headers: ServerHarness.userHeaders("jack")
            )
            #expect(busy.status == 503, "\(busy.text)")
            #expect(busy.outcome == "retry")
            #expect(busy.code == "apple_unavailable")
            #expect(try await server.coins("jack") == 0)
            let retried = try await server.call(
                .POST,
                "/v1/purchases",
                json: ["receipt": receipt, "transactionId": purchase.transaction.transactionId!],
                headers: ServerHarness.userHeaders("jack")
            )
            #expect(retried.outcome == "delivered", "\(retried.text)")
            #expect(try await server.coins("jack") == 60)
        }
    }

    @Test("an introductory offer is refused to a user who had one under another Apple ID")
    func introductoryOfferOncePerUser() async throws {
        try await ServerHarness.run(.sqlite) { server in
            let firstAppleId = try await server.store.createAccount().id
            let secondAppleId = try await server.store.createAccount().id
            let (_, trial) = try await server.orderAndBuy(PurchaseFlowTests.monthly, user: "kim", account: firstAppleId)
            #expect(trial.transaction.offerType == .introductory)
            #expect(try await server.submit(trial.signedTransaction, headers: ServerHarness.userHeaders("kim")).outcome == "delivered")
            _ = secondAppleId  // A new Apple ID would get the trial again from Apple; the server knows the user.
            let refused = try await server.call(
                .POST,
                "/v1/orders",
                json: ["productId": PurchaseFlowTests.monthly],
                headers: ServerHarness.userHeaders("kim")
            )
            #expect(refused.status == 409)
            #expect(refused.code == "introductory_offer_not_eligible")
            #expect((refused["details"] as? [String: Any])?["alternativeProductId"] as? String == PurchaseFlowTests.standard)
            let eligibility = try await server.call(.GET, "/v1/eligibility", headers: ServerHarness.userHeaders("kim"))
            let group = try #require((eligibility["groups"] as? [[String: Any]])?.first { $0["subscriptionGroup"] as? String == "21000001" })
            #expect(group["introductoryOfferEligible"] as? Bool == false)
            let monthly = (group["products"] as? [[String: Any]])?.first { $0["productId"] as? String == PurchaseFlowTests.monthly }
            #expect(monthly?["sellInstead"] as? String == PurchaseFlowTests.standard)
            let standard = try await server.call(
                .POST,
                "/v1/orders",
                json: ["productId": PurchaseFlowTests.standard],
                headers: ServerHarness.userHeaders("kim")
            )
            #expect(standard.status == 201)
            let newcomer = try await server.call(.GET, "/v1/eligibility", headers: ServerHarness.userHeaders("lee"))
            #expect(
                (newcomer["groups"] as? [[String: Any]])?.allSatisfy { $0["introductoryOfferEligible"] as? Bool == true } == true
            )
        }
    }

    @Test("offer signatures only for offers a campaign grants the user; nonces never repeat")
    func offerSignatures() async throws {
        let catalog = try Catalog.load(from: ServerHarness.catalogURL.appendingPathComponent("storekeeper-catalog.json"))
        let campaign = try #require(catalog.campaigns.first)
        let users = (0..<40).map { "user-\($0)" }
        let granted = try #require(users.first { campaign.variant(for: $0).offerId == "winback-50" })
        let control = try #require(users.first { campaign.variant(for: $0).offerId == nil })
        try await ServerHarness.run(.sqlite) { server in
            let request: [String: Any] = ["productId": PurchaseFlowTests.monthly, "offerId": "winback-50", "version": "v1"]
            let refused = try await server.call(.POST, "/v1/offers/signature", json: request, headers: ServerHarness.userHeaders(control))
            #expect(refused.status == 403)
            #expect(refused.code == "offer_not_granted")
            var unknown = request
            unknown["offerId"] = "free-forever"
            #expect(
                try await server.call(.POST, "/v1/offers/signature", json: unknown, headers: ServerHarness.userHeaders(granted)).code
                    == "offer_not_granted"
            )

            let v1 = try await server.call(.POST, "/v1/offers/signature", json: request, headers: ServerHarness.userHeaders(granted))
            #expect(v1.status == 200, "\(v1.text)")
            let signature = PromotionalOfferV1Signature(
                keyIdentifier: try #require(v1["keyIdentifier"] as? String),
                nonce: try #require(UUID(uuidString: v1["nonce"] as? String ?? "")),
                timestamp: Int64(try #require(v1["timestamp"] as? Int)),
                signature: try #require(v1["signature"] as? String)
            )
            #expect(
                signature.isValid(
                    publicKey: SharedIdentities.apiKey.publicKey,
                    bundleId: "com.example.storekeeper",
                    productId: PurchaseFlowTests.monthly,
                    offerId: "winback-50",
                    appAccountToken: ""
                )
            )
            var v2Request = request
            v2Request["version"] = "v2"
            let v2 = try await server.call(.POST, "/v1/offers/signature", json: v2Request, headers: ServerHarness.userHeaders(granted))
            #expect(v2.status == 200)
            #expect((v2["signature"] as? String)?.split(separator: ".").count == 3)
            #expect(v2["nonce"] as? String != v1["nonce"] as? String)
            #expect(try await server.audit(granted).filter { $0.action == "offer.signed" }.count == 2)
        }
    }
}
