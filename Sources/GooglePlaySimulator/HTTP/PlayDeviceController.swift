import Foundation
import GooglePlayWire
import Hummingbird

/// What a phone does against the simulated Google Play, over HTTP (the demo's walkthrough, scripts): create an
/// account, buy a one-time product or subscribe (as `BillingClient.launchBillingFlow` would, with the app's
/// obfuscated account id), and move the simulator's clock. Its answers carry what the Play Billing Library hands
/// the app (`Purchase.getPurchaseToken()`, `getOrderId()`), nothing a server may trust.
struct PlayDeviceController<Context: RequestContext>: Sendable {
    let store: SimulatedPlayStore
    /// Where the clock is moved when another simulator's clock leads this one's (nil: `POST /control/advance` here).
    var clockOwner: String?

    struct AccountRequest: Decodable {
        var licenseTester: Bool?
        var regionCode: String?
    }

    struct PurchaseRequest: Decodable {
        var account: String
        var productId: String
        var quantity: Int32?
        var obfuscatedAccountId: String?
        var pending: Bool?
        var trial: Bool?
        /// A promo code redeemed with the purchase (Play Console's promotions): free, or a free first period.
        var promoCode: String?
    }

    struct AdvanceRequest: Decodable { var seconds: Double }

    struct Account: Encodable {
        var id: String
        var licenseTester: Bool
    }

    struct Purchase: Encodable {
        var packageName: String
        var productId: String
        var purchaseToken: String
        var orderId: String
        var state: String
    }

    struct Clock: Encodable { var now: String }

    /// Ground truth, for scripts and operators: what Google holds, in the simulator's words (not Google's API).
    struct TruthPurchase: Encodable {
        var purchaseToken: String
        var orderId: String
        var productId: String
        var account: String
        var quantity: Int32
        var refundableQuantity: Int32
        var state: String
        var purchasedAt: String
        var acknowledged: Bool
        var consumed: Bool
        var test: Bool
        var promoCode: String?
    }

    struct TruthSubscription: Encodable {
        var purchaseToken: String
        var productId: String
        var basePlanId: String
        var account: String
        var firstOrderId: String
        var latestOrderId: String
        var state: String
        var startTime: String
        var expiryTime: String
        var autoRenew: Bool
        var acknowledged: Bool
        var test: Bool
        var linkedPurchaseToken: String?
        /// Milliunits: what the subscriber renews at.
        var price: Int64?
    }

    struct TruthEarning: Encodable {
        var orderId: String
        var date: String
        var type: String
        var productId: String
        var currency: String
        /// Milliunits, negative for fees and refunds.
        var amount: Int64
        var firstMillionEligible: Bool?
    }

    struct FaultsRequest: Decodable { var faults: [String] }

    func add(to router: Router<Context>) {
        let device = router.group("device")
        device.post("accounts") { request, context -> Response in
            let body = try await Self.decode(AccountRequest.self, request, context)
            let account = await store.createAccount(licenseTester: body.licenseTester ?? false, regionCode: body.regionCode ?? "US")
            return try Self.json(Account(id: account.id, licenseTester: account.isLicenseTester), status: .created)
        }
        device.post("purchases") { request, context -> Response in
            let body = try await Self.decode(PurchaseRequest.self, request, context)
            let package = store.catalog.packageName
            do {
                if store.catalog.subscription(body.productId) != nil {
                    let record = try await store.subscribe(
                        productId: body.productId,
                        account: body.account,
                        obfuscatedAccountId: body.obfuscatedAccountId,
                        trial: body.trial ?? false,
                        promoCode: body.promoCode
                    )
                    return try Self.json(
                        Purchase(
                            packageName: package,
                            productId: record.productId,
                            purchaseToken: record.token,
                            orderId: record.firstOrderId,
                            state: "PURCHASED"
                        ),
                        status: .created
                    )
                }
                let purchase = try await store.buy(
                    productId: body.productId,
                    account: body.account,
                    quantity: body.quantity ?? 1,
                    obfuscatedAccountId: body.obfuscatedAccountId,
                    pending: body.pending ?? false,
                    promoCode: body.promoCode
                )
                return try Self.json(
                    Purchase(
                        packageName: package,
                        productId: purchase.productId,
                        purchaseToken: purchase.token,
                        orderId: purchase.orderId,
                        state: body.pending == true ? "PENDING" : "PURCHASED"
                    ),
                    status: .created
                )
            } catch let error as PlayStoreError {
                return try Self.json(error.body, status: .init(code: error.status))
            }
        }
        router.get("control/purchases") { _, _ -> Response in
            let purchases = await store.allPurchases().map { purchase in
                TruthPurchase(
                    purchaseToken: purchase.token,
                    orderId: purchase.orderId,
                    productId: purchase.productId,
                    account: purchase.accountId,
                    quantity: purchase.quantity,
                    refundableQuantity: purchase.refundableQuantity,
                    state: purchase.state.name ?? String(purchase.state.rawValue),
                    purchasedAt: PlayJSON.formatTimestamp(purchase.purchasedAt),
                    acknowledged: purchase.acknowledged,
                    consumed: purchase.consumed,
                    test: purchase.isTest,
                    promoCode: purchase.promoCode
                )
            }
            return try Self.json(["purchases": purchases], status: .ok)
        }
        router.get("control/subscriptions") { _, _ -> Response in
            let subscriptions = await store.allSubscriptions().map { record in
                TruthSubscription(
                    purchaseToken: record.token,
                    productId: record.productId,
                    basePlanId: record.basePlanId,
                    account: record.accountId,
                    firstOrderId: record.firstOrderId,
                    latestOrderId: record.latestOrderId,
                    state: record.state.rawValue,
                    startTime: PlayJSON.formatTimestamp(record.startTime),
                    expiryTime: PlayJSON.formatTimestamp(record.expiryTime),
                    autoRenew: record.autoRenew,
                    acknowledged: record.acknowledged,
                    test: record.isTest,
                    linkedPurchaseToken: record.linkedPurchaseToken,
                    price: record.price ?? store.catalog.subscription(record.productId)?.price
                )
            }
            return try Self.json(["subscriptions": subscriptions], status: .ok)
        }
        router.get("control/earnings") { _, _ -> Response in
            let lines = await store.allEarnings().map {
                TruthEarning(
                    orderId: $0.orderId,
                    date: $0.date,
                    type: $0.type.text,
                    productId: $0.sku,
                    currency: $0.buyerCurrency,
                    amount: $0.buyerAmount,
                    firstMillionEligible: $0.firstMillionEligible
                )
            }
            return try Self.json(["earnings": lines], status: .ok)
        }
        router.get("control/notifications") { _, _ -> Response in
            try Self.json(["notifications": await store.published], status: .ok)
        }
        router.post("control/faults") { request, context -> Response in
            let body = try await Self.decode(FaultsRequest.self, request, context)
            var faults: Set<SimulatedPlayStore.Fault> = []
            for name in body.faults {
                guard let fault = SimulatedPlayStore.Fault(rawValue: name) else {
                    return try Self.json(PlayStoreError.invalid("fault \(name.prefix(40))").body, status: .badRequest)
                }
                faults.insert(fault)
            }
            await store.setFaults(faults)
            return try Self.json(["faults": faults.map(\.rawValue).sorted()], status: .ok)
        }
        router.get("control/clock") { _, _ -> Response in
            try Self.json(Clock(now: PlayJSON.formatTimestamp(await store.now)), status: .ok)
        }
        router.post("control/advance") { request, context -> Response in
            if let clockOwner {
                return try Self.json(
                    PlayStoreError(409, "sharedClock", "This clock follows the App Store simulator's: move it with \(clockOwner).").body,
                    status: .conflict
                )
            }
            let body = try await Self.decode(AdvanceRequest.self, request, context)
            guard body.seconds.isFinite, body.seconds >= 0, body.seconds <= 400 * 86_400 else {
                return try Self.json(PlayStoreError.invalid("seconds").body, status: .badRequest)
            }
            await store.advance(by: body.seconds)
            return try Self.json(Clock(now: PlayJSON.formatTimestamp(await store.now)), status: .ok)
        }
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ request: Request, _ context: Context) async throws -> T {
        let bytes = try await request.body.collect(upTo: 64 * 1024)
        do {
            return try JSONDecoder().decode(type, from: Data(bytes.readableBytesView))
        } catch {
            throw HTTPError(.badRequest, message: "malformed request: \(error)")
        }
    }

    private static func json(_ value: some Encodable, status: HTTPResponse.Status) throws -> Response {
        let data = try PlayJSON.encode(value)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
