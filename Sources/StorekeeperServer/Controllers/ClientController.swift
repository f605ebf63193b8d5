import AppStoreWire
import Foundation
import Hummingbird
import StorekeeperCore
import StorekeeperStorage

/// The client API under `/v1`: orders, purchases, restore, the caller's own account, wallet spending,
/// introductory-offer eligibility and subscription offer signatures. A caller only ever sees their own user.
struct ClientController<Context: RequestContext> {
    let auth: Authenticator
    let purchases: PurchaseService
    let orders: OrderStore
    let accounts: AccountStore
    let subscriptions: SubscriptionStore
    let wallet: WalletStore
    let users: UserStore
    let nonces: OfferNonceStore
    let catalog: CatalogService
    let apps: AppRegistry
    let maxBodyBytes: Int
    let orderLifetime: Duration

    func add(to router: Router<Context>) {
        let v1 = router.group("v1")
        v1.post("orders", use: createOrder)
        v1.get("orders/:id", use: getOrder)
        v1.post("orders/:id/cancel", use: cancelOrder)
        v1.post("purchases", use: submitPurchase)
        v1.post("restore", use: restore)
        v1.get("me", use: me)
        v1.post("me/merge", use: merge)
        v1.post("wallet/spend", use: spend)
        v1.get("eligibility", use: eligibility)
        v1.post("offers/signature", use: offerSignature)
    }

    @Sendable func createOrder(_ request: Request, context: Context) async throws -> Response {
        let (user, _) = try auth.clientUser(request)
        let body = try await APIJSON.decode(API.CreateOrder.self, from: request, limit: maxBodyBytes)
        guard let app = apps.app(named: body.bundleId) else {
            throw StorekeeperError.badRequest("unknown_app", "bundleId is not an app this server serves")
        }
        guard let product = catalog.catalog.product(body.productId) else {
            throw StorekeeperError(.notFound, code: "unknown_product", message: "product \(body.productId) is not in the catalog")
        }
        guard product.onSale else {
            throw StorekeeperError(.conflict, code: "product_not_for_sale", message: "product \(product.id) is not on sale")
        }
        if product.hasIntroductoryOffer, let group = product.subscriptionGroup,
            try await accounts.hadIntroductoryOffer(user, group: group)
        {
            throw StorekeeperError(
                .conflict, code: "introductory_offer_not_eligible",
                message: "this user already had an introductory offer in group \(group); sell the variant without one",
                details: product.introductoryOfferFreeVariant.map { ["alternativeProductId": $0] })
        }
        let now = Date()
        let order = Order(
            id: "ord_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""), user: user,
            bundleId: app.configuration.bundleId, productId: product.id, appAccountToken: UUID(), status: .created,
            createdAt: now, expiresAt: now.addingTimeInterval(Double(orderLifetime.components.seconds)), transactionId: nil)
        try await orders.create(order)
        return try APIJSON.response(API.OrderBody(order, now: now), status: .created)
    }

    @Sendable func getOrder(_ request: Request, context: Context) async throws -> Response {
        let (user, _) = try auth.clientUser(request)
        let id = try context.parameters.require("id")
        // Another user's order is indistinguishable from a missing one.
        guard let order = try await orders.find(id), order.user == user else {
            throw StorekeeperError.notFound("unknown_order", "no order \(id) for this user")
        }
        return try APIJSON.response(API.OrderBody(order, now: Date()))
    }

    @Sendable func cancelOrder(_ request: Request, context: Context) async throws -> Response {
        let (user, _) = try auth.clientUser(request)
        let id = try context.parameters.require("id")
        guard let order = try await orders.cancel(id, user: user) else {
            throw StorekeeperError.notFound("unknown_order", "no order \(id) for this user")
        }
        return try APIJSON.response(API.OrderBody(order, now: Date()))
    }

    @Sendable func submitPurchase(_ request: Request, context: Context) async throws -> Response {
        let identity = try auth.client(request)
        let body = try await APIJSON.decode(API.SubmitPurchase.self, from: request, limit: maxBodyBytes)
        if let jws = body.signedTransaction {
            guard body.receipt == nil else {
                throw StorekeeperError.badRequest("ambiguous_purchase", "send signedTransaction or receipt, not both")
            }
            switch try await purchases.submitSignedTransaction(jws, orderId: body.orderId, identity: identity) {
            case .delivered(let delivery):
                return try APIJSON.response(API.PurchaseAnswer(outcome: "delivered", delivery: API.DeliveryBody(delivery)))
            case .parked(let id):
                return try APIJSON.response(
                    API.PurchaseAnswer(
                        outcome: "retry", code: "unattributed",
                        message: "transaction \(id) is verified but names no user: sign in and submit again; support can also assign it"),
                    status: .accepted)
            case .ownedByAnotherUser:
                throw StorekeeperError.rejected(.conflict, "owned_by_another_user", "the transaction belongs to another user")
            }
        }
        guard let receipt = body.receipt else {
            throw StorekeeperError.badRequest("missing_purchase", "send signedTransaction (StoreKit 2) or receipt (legacy)")
        }
        let results = try await purchases.submitReceipt(
            receipt, transactionId: body.transactionId, orderId: body.orderId, bundleId: body.bundleId, identity: identity)
        return try answer(results, focus: body.transactionId)
    }

    @Sendable func restore(_ request: Request, context: Context) async throws -> Response {
        let identity = try auth.client(request)
        let body = try await APIJSON.decode(API.Restore.self, from: request, limit: maxBodyBytes)
        guard body.signedTransactions.count <= 500 else {
            throw StorekeeperError.badRequest("too_many_transactions", "restore at most 500 transactions per request")
        }
        return try answer(try await purchases.restore(body.signedTransactions, identity: identity), focus: nil)
    }

    /// One answer for many items: the focused transaction's outcome, or `retry` if any item should be retried.
    private func answer(_ results: [PurchaseService.ItemResult], focus: String?) throws -> Response {
        var deliveries: [API.DeliveryBody] = []
        var problems: [API.ItemProblem] = []
        var outcome = "delivered"
        var focusProblem: StorekeeperError?
        for result in results {
            switch result {
            case .delivered(let delivery):
                deliveries.append(API.DeliveryBody(delivery))
            case .refused(let id, let error):
                problems.append(.init(transactionId: id, code: error.code, message: error.message, outcome: error.outcome?.rawValue))
                if error.outcome == .retry && focus == nil { outcome = "retry" }
                if let focus, id == focus { focusProblem = error }
            }
        }
        if let focusProblem {
            outcome = focusProblem.outcome?.rawValue ?? "rejected"
        } else if focus == nil, deliveries.isEmpty, !problems.isEmpty, outcome != "retry" {
            // Nothing was delivered and nothing is worth retrying.
            outcome = "rejected"
        }
        return try APIJSON.response(
            API.PurchaseAnswer(
                outcome: outcome, code: focusProblem?.code, message: focusProblem?.message, deliveries: deliveries,
                problems: problems.isEmpty ? nil : problems))
    }

    @Sendable func me(_ request: Request, context: Context) async throws -> Response {
        let (user, _) = try auth.clientUser(request)
        return try await Self.userBody(user, request: request, accounts: accounts, orders: orders, subscriptions: subscriptions)
    }

    /// The user's state; `?at=<epoch ms>` evaluates entitlements at another moment (support: "what did they have
    /// when they wrote to us"; tests: a simulated clock).
    static func userBody(
        _ user: UserID, request: Request, accounts: AccountStore, orders: OrderStore, subscriptions: SubscriptionStore
    ) async throws -> Response {
        var now = Date()
        if let text = request.uri.queryParameters.get("at") {
            guard let millis = Int64(text) else { throw StorekeeperError.badRequest("invalid_at", "at must be epoch milliseconds") }
            now = Date(timeIntervalSince1970: Double(millis) / 1000)
        }
        let snapshot = try await accounts.snapshot(of: user)
        let userOrders = try await orders.orders(of: user)
        let records = try await subscriptions.subscriptions(of: user)
        return try APIJSON.response(API.UserBody(snapshot: snapshot, orders: userOrders, subscriptions: records, now: now))
    }

    @Sendable func merge(_ request: Request, context: Context) async throws -> Response {
        let (user, identity) = try auth.clientUser(request)
        guard identity.method == "token" || identity.method.hasPrefix("apiKey:"), !user.isGuest else {
            throw StorekeeperError(.forbidden, code: "account_required", message: "merging needs a signed-in user")
        }
        let body = try await APIJSON.decode(API.Merge.self, from: request, limit: maxBodyBytes)
        guard let guest = UserID.guest(deviceId: body.deviceId) else {
            throw StorekeeperError.badRequest("invalid_device", "deviceId must be 8-128 printable characters")
        }
        let summary = try await users.mergeGuest(guest, into: user)
        return try APIJSON.response(
            API.MergeAnswer(
                userId: user.rawValue, mergedGuest: guest.rawValue, transactions: summary.transactions,
                entitlements: summary.entitlements, orders: summary.orders, coins: summary.coins))
    }

    @Sendable func spend(_ request: Request, context: Context) async throws -> Response {
        let (user, _) = try auth.clientUser(request)
        let body = try await APIJSON.decode(API.Spend.self, from: request, limit: maxBodyBytes)
        guard body.amount > 0 else { throw StorekeeperError.badRequest("invalid_amount", "amount must be positive") }
        guard !body.idempotencyKey.isEmpty, body.idempotencyKey.utf8.count <= 200 else {
            throw StorekeeperError.badRequest("invalid_idempotency_key", "idempotencyKey must be 1-200 bytes")
        }
        let currency = body.currency ?? "coins"
        switch try await wallet.spend(
            user: user, currency: currency, amount: body.amount, idempotencyKey: body.idempotencyKey, reason: body.reason)
        {
        case .applied(let balance):
            return try APIJSON.response(API.WalletAnswer(currency: currency, balance: balance, repeated: false))
        case .duplicate(let balance):
            return try APIJSON.response(API.WalletAnswer(currency: currency, balance: balance, repeated: true))
        case .insufficientFunds(let balance):
            throw StorekeeperError(
                .conflict, code: "insufficient_funds", message: "balance \(balance) is less than \(body.amount)",
                details: ["balance": String(balance)])
        }
    }

    @Sendable func eligibility(_ request: Request, context: Context) async throws -> Response {
        let (user, _) = try auth.clientUser(request)
        let current = catalog.catalog
        var groups: [API.Eligibility.Group] = []
        for group in current.subscriptionGroups {
            let used = try await accounts.hadIntroductoryOffer(user, group: group)
            let products = current.products.filter { $0.subscriptionGroup == group }.map { product in
                API.Eligibility.Product(
                    productId: product.id, hasIntroductoryOffer: product.hasIntroductoryOffer,
                    sellInstead: used && product.hasIntroductoryOffer ? product.introductoryOfferFreeVariant : nil)
            }
            groups.append(.init(subscriptionGroup: group, introductoryOfferEligible: !used, products: products))
        }
        return try APIJSON.response(API.Eligibility(userId: user.rawValue, groups: groups))
    }

    @Sendable func offerSignature(_ request: Request, context: Context) async throws -> Response {
        let (user, _) = try auth.clientUser(request)
        let body = try await APIJSON.decode(API.OfferSignatureRequest.self, from: request, limit: maxBodyBytes)
        let current = catalog.catalog
        guard let product = current.product(body.productId), product.kind == .autoRenewable else {
            throw StorekeeperError.notFound("unknown_product", "\(body.productId) is not an auto-renewable product in the catalog")
        }
        guard let campaign = current.campaignGranting(offerId: body.offerId, productId: product.id, to: user.rawValue) else {
            throw StorekeeperError(
                .forbidden, code: "offer_not_granted", message: "no running campaign grants offer \(body.offerId) to this user")
        }
        guard let app = apps.app(named: nil) ?? apps.apps.first else {
            throw StorekeeperError(.internal, code: "no_app", message: "no app configured")
        }
        let variant = campaign.variant(for: user.rawValue).name
        let version = body.version ?? "v2"
        switch version {
        case "v1" where app.offerSignerV1 == nil, "v2" where app.requestSigner == nil:
            throw StorekeeperError(
                .conflict, code: "offer_signing_unavailable", message: "no In-App Purchase key (and issuer, for v2) is configured")
        case "v1", "v2": break
        default: throw StorekeeperError.badRequest("invalid_version", "version must be v1 or v2")
        }
        var nonce = UUID()
        var recorded = false
        for _ in 0..<3 where !recorded {
            recorded = try await nonces.record(
                nonce, user: user, productId: product.id, offerId: body.offerId, campaignId: campaign.id)
            if !recorded { nonce = UUID() }
        }
        guard recorded else { throw StorekeeperError(.internal, code: "nonce_collision", message: "could not record a fresh nonce") }
        switch version {
        case "v1":
            guard let signer = app.offerSignerV1 else {
                throw StorekeeperError(.conflict, code: "offer_signing_unavailable", message: "no In-App Purchase key is configured")
            }
            let signature = try signer.sign(
                productId: product.id, offerId: body.offerId, appAccountToken: body.appAccountToken ?? "", nonce: nonce)
            return try APIJSON.response(
                API.OfferSignatureAnswer(
                    version: "v1", productId: product.id, offerId: body.offerId, campaignId: campaign.id, variant: variant,
                    keyIdentifier: signature.keyIdentifier, nonce: signature.nonce.uuidString.lowercased(),
                    timestamp: signature.timestamp, signature: signature.signature))
        case "v2":
            guard let signer = app.requestSigner else {
                throw StorekeeperError(
                    .conflict, code: "offer_signing_unavailable", message: "no In-App Purchase key and issuer are configured")
            }
            let jws = try signer.promotionalOfferV2(
                productId: product.id, offerIdentifier: body.offerId, transactionId: body.transactionId, nonce: nonce)
            return try APIJSON.response(
                API.OfferSignatureAnswer(
                    version: "v2", productId: product.id, offerId: body.offerId, campaignId: campaign.id, variant: variant,
                    keyIdentifier: signer.keyIdentifier, nonce: nonce.uuidString.lowercased(), timestamp: nil, signature: jws))
        default:
            throw StorekeeperError.badRequest("invalid_version", "version must be v1 or v2")
        }
    }
}
