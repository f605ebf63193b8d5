import AsyncHTTPClient
import Foundation
import GooglePlaySimulator
import GooglePlayWire
import Hummingbird
import HummingbirdTesting
import Testing
import _CryptoExtras

/// The simulated Play's one-time products, read and changed through GooglePlayWire's client over a real socket, as
/// Storekeeper will: OAuth first, then Google's paths, JSON and errors; the three-day acknowledgement rule, pending
/// purchases, quantity refunds and the voided purchases list with its window and pages.
@Suite struct PlaySimulatorTests {
    static let package = PlayCatalog.sample.packageName

    /// Runs `body` with a simulator on a free port and a client holding a service account it issued.
    func withSimulator(_ body: @escaping @Sendable (SimulatedPlayStore, PlayDeveloperAPIClient, Int) async throws -> Void) async throws {
        let store = try SimulatedPlayStore()
        let app = PlaySimulatorServer.buildApplication(store: store, port: 0)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let key = try await store.issueServiceAccount(
                email: "storekeeper@sim.iam.gserviceaccount.com",
                tokenURI: "http://127.0.0.1:\(port)/token"
            )
            let transport = AsyncHTTPPlayTransport(client: .shared)
            let api = PlayDeveloperAPIClient(
                baseURL: "http://127.0.0.1:\(port)",
                tokens: AccessTokenProvider(key: key, transport: transport),
                transport: transport,
                sleep: { _ in }
            )
            try await body(store, api, port)
        }
    }

    @Test func aPurchaseIsReadAcknowledgedAndConsumed() async throws {
        try await withSimulator { store, api, _ in
            let account = await store.createAccount()
            let bought = try await store.buy(productId: "coins_100", account: account.id, quantity: 3, obfuscatedAccountId: "order-7")
            var read = try await api.getProduct(packageName: Self.package, productId: "coins_100", token: bought.token)
            #expect(read.purchaseState == .purchased)
            #expect(read.orderId == bought.orderId)
            #expect(read.units == 3)
            #expect(read.obfuscatedExternalAccountId == "order-7")
            #expect(read.acknowledgementState == .yetToBeAcknowledged)
            #expect(!read.isTestPurchase)
            try await api.consumeProduct(packageName: Self.package, productId: "coins_100", token: bought.token)
            read = try await api.getProduct(packageName: Self.package, productId: "coins_100", token: bought.token)
            #expect(read.consumptionState == .consumed)
            #expect(read.acknowledgementState == .acknowledged, "consuming acknowledges")
            await #expect(
                throws: PlayDeveloperAPIError(status: 400, reason: "productNotOwnedByUser", message: "The product is not owned by the user.")
            ) {
                try await api.consumeProduct(packageName: Self.package, productId: "coins_100", token: bought.token)
            }

            let tester = await store.createAccount(licenseTester: true)
            let unlock = try await store.buy(productId: "lifetime_pro", account: tester.id)
            try await api.acknowledgeProduct(packageName: Self.package, productId: "lifetime_pro", token: unlock.token, developerPayload: "p")
            try await api.acknowledgeProduct(packageName: Self.package, productId: "lifetime_pro", token: unlock.token)
            let v2 = try await api.getProductV2(packageName: Self.package, token: unlock.token)
            #expect(v2.isTestPurchase)
            #expect(v2.acknowledgementState == .acknowledged)
            #expect(v2.productLineItem?.first?.productId == "lifetime_pro")
            // Nothing was left unacknowledged, so nothing is voided after the window.
            await store.advance(by: 4 * 86_400)
            #expect(try await api.listVoidedPurchases(packageName: Self.package).voidedPurchases?.isEmpty ?? true)
        }
    }

    @Test func anUnacknowledgedPurchaseIsRefundedAfterThreeDays() async throws {
        try await withSimulator { store, api, _ in
            let account = await store.createAccount()
            let bought = try await store.buy(productId: "lifetime_pro", account: account.id)
            await store.advance(by: 3 * 86_400 - 1)
            #expect(try await api.getProduct(packageName: Self.package, productId: "lifetime_pro", token: bought.token).purchaseState == .purchased)
            await store.advance(by: 2)
            let read = try await api.getProduct(packageName: Self.package, productId: "lifetime_pro", token: bought.token)
            #expect(read.purchaseState == .canceled)
            #expect(read.refundableQuantity == 0)
            let voided = try #require(try await api.listVoidedPurchases(packageName: Self.package).voidedPurchases)
            #expect(voided.count == 1)
            #expect(voided.first?.voidedReason == .unacknowledgedPurchase)
            #expect(voided.first?.voidedSource == .google)
            #expect(voided.first?.orderId == bought.orderId)
            #expect(voided.first?.voidedTimeMillis == PlayInt64(millis: bought.purchasedAt.addingTimeInterval(3 * 86_400)), "voided at the deadline")
        }
    }

    @Test func aPendingPurchaseIsNotOwnedUntilItCompletes() async throws {
        try await withSimulator { store, api, _ in
            let account = await store.createAccount()
            let pending = try await store.buy(productId: "lifetime_pro", account: account.id, pending: true)
            #expect(try await api.getProduct(packageName: Self.package, productId: "lifetime_pro", token: pending.token).purchaseState == .pending)
            #expect(try await api.getProductV2(packageName: Self.package, token: pending.token).purchaseCompletionTime == nil)
            await #expect(throws: PlayDeveloperAPIError.self) {
                try await api.acknowledgeProduct(packageName: Self.package, productId: "lifetime_pro", token: pending.token)
            }
            // Pending for five days: the window starts only when it completes.
            await store.advance(by: 5 * 86_400)
            try await store.completePending(pending.token)
            await store.advance(by: 2 * 86_400)
            let read = try await api.getProduct(packageName: Self.package, productId: "lifetime_pro", token: pending.token)
            #expect(read.purchaseState == .purchased)
            try await api.acknowledgeProduct(packageName: Self.package, productId: "lifetime_pro", token: pending.token)
        }
    }

    @Test func refundsWholeAndByQuantityAndTheVoidedPages() async throws {
        try await withSimulator { store, api, _ in
            let account = await store.createAccount()
            let coins = try await store.buy(productId: "coins_100", account: account.id, quantity: 3)
            try await api.consumeProduct(packageName: Self.package, productId: "coins_100", token: coins.token)
            try await store.refund(packageName: Self.package, orderId: coins.orderId, revoke: true, quantity: 1)
            var read = try await api.getProduct(packageName: Self.package, productId: "coins_100", token: coins.token)
            #expect(read.refundableQuantity == 2)
            #expect(read.purchaseState == .purchased, "two units are still the user's")
            #expect(
                try await api.listVoidedPurchases(packageName: Self.package, includeQuantityBasedPartialRefund: false).voidedPurchases?.isEmpty
                    ?? true
            )
            let partial = try #require(try await api.listVoidedPurchases(packageName: Self.package).voidedPurchases?.first)
            #expect(partial.voidedQuantity == 1)

            // The rest by order refund over the API, revoked.
            try await api.refundOrder(packageName: Self.package, orderId: coins.orderId, revoke: true)
            read = try await api.getProduct(packageName: Self.package, productId: "coins_100", token: coins.token)
            #expect(read.purchaseState == .canceled)
            #expect(read.refundableQuantity == 0)

            // A refund without revoke is not listed.
            let unlock = try await store.buy(productId: "lifetime_pro", account: account.id)
            try await api.refundOrder(packageName: Self.package, orderId: unlock.orderId, revoke: false)
            for index in 0..<3 {
                let other = await store.createAccount()
                let bought = try await store.buy(productId: "coins_100", account: other.id)
                await store.advance(by: Double(index + 1) * 60)
                try await store.void(token: bought.token, source: .user, reason: .remorse)
            }
            var seen: [String] = []
            var page = try await api.listVoidedPurchases(packageName: Self.package, maxResults: 2)
            seen += page.voidedPurchases?.compactMap(\.orderId) ?? []
            while let next = page.tokenPagination?.nextPageToken {
                page = try await api.listVoidedPurchases(packageName: Self.package, maxResults: 2, pageToken: next)
                seen += page.voidedPurchases?.compactMap(\.orderId) ?? []
            }
            #expect(seen.count == 5, "one partial, one whole, three voided by users: \(seen)")
            #expect(!seen.contains(unlock.orderId))
            // The window looks back 30 days at most.
            await #expect(throws: PlayDeveloperAPIError.self) {
                try await api.listVoidedPurchases(packageName: Self.package, startTime: Date(timeIntervalSince1970: 1_700_000_000))
            }
        }
    }

    @Test func strangersAndWrongTokensGetGooglesErrors() async throws {
        try await withSimulator { store, api, port in
            let account = await store.createAccount()
            let bought = try await store.buy(productId: "lifetime_pro", account: account.id)
            do {
                _ = try await api.getProduct(packageName: Self.package, productId: "lifetime_pro", token: "no-such-token")
                Issue.record("an unknown token must be refused")
            } catch let error as PlayDeveloperAPIError {
                #expect(error.status == 404 && error.reason == "purchaseTokenNotFound" && error.isGone)
            }
            await #expect(
                throws: PlayDeveloperAPIError(
                    status: 400,
                    reason: "purchaseTokenDoesNotMatchPackageName",
                    message: "The purchase token does not match the package name."
                )
            ) {
                _ = try await api.getProduct(packageName: "com.other.app", productId: "lifetime_pro", token: bought.token)
            }
            // No bearer token: 401, Google's body.
            let transport = AsyncHTTPPlayTransport(client: .shared)
            let bare = try await transport.send(
                PlayHTTPRequest(
                    method: "GET",
                    url:
                        "http://127.0.0.1:\(port)/androidpublisher/v3/applications/\(Self.package)/purchases/products/lifetime_pro/tokens/\(bought.token)"
                )
            )
            #expect(bare.status == 401)
            #expect(try PlayJSON.decode(GoogleAPIErrorBody.self, from: bare.body).reason == "authError")
            // An assertion signed by a key the simulator never issued.
            let stranger = try ServiceAccountKey.parse(
                ServiceAccountKey(
                    clientEmail: "storekeeper@sim.iam.gserviceaccount.com",
                    privateKeyId: "x",
                    privateKey: try .init(keySize: .bits2048),
                    tokenURI: "http://127.0.0.1:\(port)/token"
                ).json()
            )
            let forged = AccessTokenProvider(key: stranger, transport: transport)
            await #expect(throws: PlayAuthError.grantRefused(status: 400, error: "invalid_grant", description: "Invalid JWT Signature.")) {
                _ = try await forged.token()
            }
        }
    }
}
