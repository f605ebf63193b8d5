import AppStoreSimulator
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperCore
import Testing

/// `GET /v1/catalog`: what a paywall shows one caller — offerings per subscription group, the variant without an
/// introductory offer for a caller who had one, the caller's campaign offer — cached by the app with an ETag.
@Suite("The client catalog")
struct CatalogEndpointTests {
    static let yearly = "com.example.storekeeper.membership.yearly"

    @Test("offerings per group, highest level first; an intro variant is never its own package", arguments: TestDatabase.available)
    func offerings(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let answer = try await server.api(ServerHarness.userHeaders("paula")).getCatalog().ok
            let catalog = try answer.body.json
            #expect(catalog.userId == "paula")
            #expect(answer.headers.cacheControl == "private, no-cache")
            #expect(answer.headers.eTag.hasPrefix("\"") && answer.headers.eTag.hasSuffix("\"") && answer.headers.eTag.count == 45)
            #expect(catalog.products.map(\.id).contains(PurchaseFlowTests.coins))
            #expect(catalog.products.first { $0.id == PurchaseFlowTests.coins }?.coins == 60)
            #expect(catalog.products.first { $0.id == PurchaseFlowTests.pass }?.duration == "P1M")
            #expect(catalog.offerings.map(\.id) == ["21000001", "21000003", "21000002"], "by entitlement: membership, teams, vip")
            let membership = try #require(catalog.offerings.first)
            #expect(membership.introductoryOfferEligible)
            #expect(membership.packages.map(\.id) == [Self.yearly, PurchaseFlowTests.monthly], "level 1 first; the standard variant left out")
            #expect(membership.packages.map(\.productId) == [Self.yearly, PurchaseFlowTests.monthly])
            #expect(catalog.offerings[2].packages.map(\.id) == ["com.example.storekeeper.vipA", "com.example.storekeeper.vipB"])
        }
    }

    @Test("the caller's campaign variant, once a subscriber: an offer listed is one the server signs; the control group sees none")
    func campaignOffers() async throws {
        let file = try Catalog.load(from: ServerHarness.catalogURL.appendingPathComponent("storekeeper-catalog.json"))
        let campaign = try #require(file.campaigns.first)
        let users = (0..<40).map { "shopper-\($0)" }
        let granted = try #require(users.first { campaign.variant(for: $0).offerId != nil })
        let control = try #require(users.first { campaign.variant(for: $0).offerId == nil })
        try await ServerHarness.run(.sqlite) { server in
            func monthly(_ user: String) async throws -> Components.Schemas.Package {
                let catalog = try await server.api(ServerHarness.userHeaders(user)).getCatalog().ok.body.json
                #expect(catalog.offerings.first?.packages.first { $0.id == Self.yearly }?.offer == nil, "no campaign on yearly")
                return try #require(catalog.offerings.first?.packages.first { $0.id == PurchaseFlowTests.monthly })
            }
            #expect(try await monthly(granted).offer == nil, "the App Store gives promotional offers to subscribers only")
            for user in [granted, control] {
                // A yearly subscriber: a current subscriber of the group.
                let account = try await server.store.createAccount().id
                let (_, bought) = try await server.orderAndBuy(Self.yearly, user: user, account: account)
                #expect(try await server.submit(bought.signedTransaction, headers: ServerHarness.userHeaders(user)).outcome == "delivered")
                let package = try await monthly(user)
                let signed = try await server.call(
                    .POST,
                    "/v1/offers/signature",
                    json: ["productId": PurchaseFlowTests.monthly, "offerId": "winback-50"],
                    headers: ServerHarness.userHeaders(user)
                )
                if user == granted {
                    #expect(package.offer == .init(campaignId: campaign.id, variant: "offer", offerId: "winback-50"))
                    #expect(signed.status == 200, "the listed offer is signed: \(signed.text)")
                } else {
                    #expect(package.offer == nil)
                    #expect(signed.code == "offer_not_granted")
                }
            }
        }
    }

    @Test("ETag: 304 for the current tag; a new tag once the caller had the trial, selling the variant", arguments: TestDatabase.available)
    func entityTags(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let client = try server.api(ServerHarness.userHeaders("quinn"))
            let first = try await client.getCatalog().ok
            let tag = first.headers.eTag
            #expect(try await client.getCatalog(headers: .init(ifNoneMatch: tag)).notModified.headers.eTag == tag)
            #expect(try await client.getCatalog(headers: .init(ifNoneMatch: "\"other\", W/\(tag)")).notModified.headers.eTag == tag)
            #expect(try await client.getCatalog(headers: .init(ifNoneMatch: "\"other\"")).ok.headers.eTag == tag)
            let other = try await server.api(ServerHarness.userHeaders("rosa")).getCatalog().ok.headers.eTag
            #expect(other != tag, "the tag covers the caller")
            let overlong = try await client.getCatalog(headers: .init(ifNoneMatch: String(repeating: "a", count: 1025))).badRequest
            #expect(try overlong.body.json.code == "invalid_if_none_match")

            // The trial, bought: the monthly package now sells the variant without one, and the tag moves.
            let account = try await server.store.createAccount().id
            let (_, trial) = try await server.orderAndBuy(PurchaseFlowTests.monthly, user: "quinn", account: account)
            #expect(try await server.submit(trial.signedTransaction, headers: ServerHarness.userHeaders("quinn")).outcome == "delivered")
            let after = try await client.getCatalog(headers: .init(ifNoneMatch: tag)).ok
            #expect(after.headers.eTag != tag)
            let membership = try #require(try after.body.json.offerings.first)
            #expect(!membership.introductoryOfferEligible)
            #expect(membership.packages.first { $0.id == PurchaseFlowTests.monthly }?.productId == PurchaseFlowTests.standard)
            #expect(
                try await client.createOrder(body: .json(.init(productId: PurchaseFlowTests.standard))).created.body.json.productId
                    == PurchaseFlowTests.standard
            )

            // An operator takes the yearly plan off sale: the tag moves for everyone.
            let admin = try server.api(ServerHarness.adminHeaders)
            var yearly = try #require(try await admin.adminGetCatalog().ok.body.json.products.first { $0.id == Self.yearly })
            yearly.onSale = false
            _ = try await admin.adminPutProduct(path: .init(id: Self.yearly), body: .json(yearly)).ok
            let rosa = try await server.api(ServerHarness.userHeaders("rosa")).getCatalog(headers: .init(ifNoneMatch: other)).ok
            #expect(rosa.headers.eTag != other)
            #expect(try rosa.body.json.offerings.first?.packages.map(\.id) == [PurchaseFlowTests.monthly])
            #expect(try !rosa.body.json.products.contains { $0.id == Self.yearly })
        }
    }
}
