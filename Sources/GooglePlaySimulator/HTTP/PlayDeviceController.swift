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
