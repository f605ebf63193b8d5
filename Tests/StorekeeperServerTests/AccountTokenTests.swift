import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperServer
import Testing

/// Issue 19, item 5: a purchase that reached its user without an `appAccountToken` (bought outside the app, then
/// restored, or assigned by support) gets the user's own token set at Apple (Set App Account Token), so its renewals
/// and notifications name the user; audited, once, and again for the new owner when it moves.
@Suite("Set App Account Token")
struct AccountTokenTests {
    static let day: TimeInterval = 86_400

    /// The token the audit says Apple took for `original`.
    static func confirmedToken(_ server: ServerHarness, user: String, original: String) async throws -> UUID? {
        let entry = try await server.audit(user).last { $0.action == "transaction.account_token_set" && $0.subject == original }
        guard let detail = entry?.detail, let range = detail.range(of: "app account token ") else { return nil }
        return UUID(uuidString: String(detail[range.upperBound...].prefix(36)))
    }

    @Test("a subscription bought outside the app and restored by its user renews carrying the user's token", arguments: TestDatabase.available)
    func restoredSubscription(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            let store = server.store
            let account = try await store.createAccount().id
            // An offer code or a purchase on another device: no token.
            let bought = try await store.purchase(productId: PurchaseFlowTests.monthly, account: account)
            let original = try #require(bought.transaction.originalTransactionId)
            #expect(bought.transaction.appAccountToken == nil)
            let restored = try await server.submit(bought.signedTransaction, headers: ServerHarness.userHeaders("ata"))
            #expect(restored.status == 200 && restored.outcome == "delivered", "\(restored.text)")

            _ = try await server.runJob("set-account-tokens")
            let token = try #require(try await Self.confirmedToken(server, user: "ata", original: original), "audited on the user")
            // Apple now holds the token on the subscription: the device's history shows it.
            let atApple = try #require(await store.transactions(account: account).first { $0.transactionId == original })
            #expect(atApple.appAccountToken == token.uuidString.lowercased())
            #expect(try await server.runJob("set-account-tokens") == 0, "set once")

            // The renewal and its notification carry it, and the renewal lands on the same user.
            await store.setDeliversNotifications(true)
            try await store.advance(by: 31 * Self.day)
            try await server.deliverAndApply()
            let renewal = try #require(
                await store.transactions(account: account).last { $0.originalTransactionId == original && $0.transactionId != original }
            )
            #expect(renewal.appAccountToken == token.uuidString.lowercased())
            let renewed = try #require(await store.sentNotifications().last { $0.type == .didRenew })
            let signedRenewal = try #require(renewed.payload.data?.signedTransactionInfo)
            let decoded = try SignedDataVerifier.decodeUnverified(signedRenewal, as: JWSTransactionDecodedPayload.self).payload
            #expect(decoded.appAccountToken == token.uuidString.lowercased(), "the notification names the user")
            try await server.expectMatchesTruth(user: "ata", token: token, "after a renewal carrying the set token")
            #expect(try await server.activeEntitlements("ata", at: await server.simulatedNow).contains("membership"))

            // The same user's next tokenless purchase gets the same token: it is the user's, not the purchase's.
            let pass = try await store.purchase(productId: AttributionTests.pass, account: account)
            #expect(try await server.submit(pass.signedTransaction, headers: ServerHarness.userHeaders("ata")).outcome == "delivered")
            _ = try await server.runJob("set-account-tokens")
            let passOriginal = try #require(pass.transaction.originalTransactionId)
            #expect(try await Self.confirmedToken(server, user: "ata", original: passOriginal) == token)
        }
    }

    @Test("support assigns a parked purchase; a guest merge sets the account's token again; consumables are left alone")
    func assignedAndMerged() async throws {
        try await ServerHarness.run(.sqlite) { server in
            let store = server.store
            let account = try await store.createAccount().id
            let coins = try await store.purchase(productId: PurchaseFlowTests.coins, account: account)
            let pass = try await store.purchase(productId: AttributionTests.pass, account: account)
            let passId = try #require(pass.transaction.transactionId)
            // Nobody to attribute it to: parked; support delivers it to a guest.
            #expect(try await server.submit(pass.signedTransaction, headers: [("X-API-Key", ServerHarness.apiKey)]).status == 202)
            let guest = try await server.newGuest()
            let assigned = try await server.call(
                .POST,
                "/v1/admin/pending/\(passId)/assign",
                json: ["userId": guest.userId, "reason": "ticket 42"],
                headers: ServerHarness.adminHeaders
            )
            #expect(assigned.status == 200, "\(assigned.text)")
            #expect(try await server.submit(coins.signedTransaction, headers: guest.headers).outcome == "delivered")
            _ = try await server.runJob("set-account-tokens")
            let guestToken = try #require(try await Self.confirmedToken(server, user: guest.userId, original: passId))
            #expect(
                await store.transactions(account: account).first { $0.transactionId == passId }?.appAccountToken == guestToken.uuidString.lowercased()
            )
            let coinsId = try #require(coins.transaction.transactionId)
            #expect(
                await store.transactions(account: account).first { $0.transactionId == coinsId }?.appAccountToken == nil,
                "a consumable has no later transactions to name the user"
            )

            // The guest signs in: the purchase is the account's now, and so is the token at Apple.
            let merged = try await server.call(.POST, "/v1/me/merge", json: ["guestToken": guest.token], headers: ServerHarness.userHeaders("mira"))
            #expect(merged.status == 200, "\(merged.text)")
            _ = try await server.runJob("set-account-tokens")
            let accountToken = try #require(try await Self.confirmedToken(server, user: "mira", original: passId))
            #expect(accountToken != guestToken)
            #expect(
                await store.transactions(account: account).first { $0.transactionId == passId }?.appAccountToken
                    == accountToken.uuidString.lowercased()
            )
            // A purchase the app ordered keeps the order's token: nothing to set.
            let (ordered, orderToken) = try await server.newCustomer("mira", product: PurchaseFlowTests.monthly)
            let subscription = try await store.purchase(productId: PurchaseFlowTests.monthly, account: ordered, appAccountToken: orderToken)
            #expect(try await server.submit(subscription.signedTransaction, headers: ServerHarness.userHeaders("mira")).outcome == "delivered")
            #expect(try await server.runJob("set-account-tokens") == 0)
            let metrics = try await server.call(.GET, "/metrics")
            #expect(metrics.text.contains("storekeeper_account_tokens_set_total{result=\"set\"}"), "the calls are counted")
        }
    }
}
