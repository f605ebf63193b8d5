import Foundation
import Hummingbird
import StorekeeperCore
import StorekeeperStorage

/// The admin API (its own keys): any user's account and audit trail, the catalog, the pending-recovery list and
/// wallet adjustments. Every change names the admin key in its audit entry.
struct AdminController<Context: RequestContext> {
    let auth: Authenticator
    let accounts: AccountStore
    let subscriptions: SubscriptionStore
    let orders: OrderStore
    let audit: AuditStore
    let wallet: WalletStore
    let ledger: PurchaseLedger
    let catalog: CatalogService
    let maxBodyBytes: Int

    func add(to router: Router<Context>) {
        let v1 = router.group("v1")
        v1.get("users/:id", use: user)
        v1.get("users/:id/audit", use: auditTrail)
        v1.post("users/:id/wallet/adjust", use: adjust)
        v1.get("admin/catalog", use: getCatalog)
        v1.put("admin/catalog/products/:id", use: putProduct)
        v1.put("admin/catalog/campaigns/:id", use: putCampaign)
        v1.get("admin/pending", use: pending)
    }

    private func userId(_ context: Context) throws -> UserID {
        let raw = try context.parameters.require("id")
        guard !raw.isEmpty, raw.utf8.count <= 240 else { throw StorekeeperError.badRequest("invalid_user", "bad user id") }
        return UserID(rawValue: raw.removingPercentEncoding ?? raw)
    }

    @Sendable func user(_ request: Request, context: Context) async throws -> Response {
        _ = try auth.admin(request)
        return try await ClientController<Context>.userBody(
            try userId(context), request: request, accounts: accounts, orders: orders, subscriptions: subscriptions)
    }

    @Sendable func auditTrail(_ request: Request, context: Context) async throws -> Response {
        _ = try auth.admin(request)
        let user = try userId(context)
        let after = request.uri.queryParameters.get("after", as: Int64.self) ?? 0
        let limit = min(max(request.uri.queryParameters.get("limit", as: Int.self) ?? 200, 1), 1000)
        let entries = try await audit.entries(for: user, after: after, limit: limit)
        return try APIJSON.response(
            API.AuditBody(
                userId: user.rawValue,
                entries: entries.map {
                    .init(
                        id: $0.id, action: $0.entry.action, subject: $0.entry.subject, amount: $0.entry.amount,
                        periodStart: $0.entry.periodStart, periodEnd: $0.entry.periodEnd, cause: $0.entry.cause,
                        detail: $0.entry.detail, createdAt: $0.entry.createdAt)
                }, next: entries.count == limit ? entries.last?.id : nil))
    }

    @Sendable func adjust(_ request: Request, context: Context) async throws -> Response {
        let admin = try auth.admin(request)
        let user = try userId(context)
        let body = try await APIJSON.decode(API.Adjust.self, from: request, limit: maxBodyBytes)
        guard body.amount != 0 else { throw StorekeeperError.badRequest("invalid_amount", "amount must not be zero") }
        switch try await wallet.adjust(
            user: user, amount: body.amount, idempotencyKey: body.idempotencyKey, admin: admin, reason: body.reason)
        {
        case .applied(let balance): return try APIJSON.response(API.WalletAnswer(currency: "coins", balance: balance, repeated: false))
        case .duplicate(let balance): return try APIJSON.response(API.WalletAnswer(currency: "coins", balance: balance, repeated: true))
        case .insufficientFunds(let balance):
            throw StorekeeperError(.conflict, code: "insufficient_funds", message: "balance is \(balance)")
        }
    }

    @Sendable func getCatalog(_ request: Request, context: Context) async throws -> Response {
        _ = try auth.admin(request)
        return try APIJSON.response(catalog.catalog)
    }

    @Sendable func putProduct(_ request: Request, context: Context) async throws -> Response {
        _ = try auth.admin(request)
        let id = try context.parameters.require("id")
        let product = try await APIJSON.decode(CatalogProduct.self, from: request, limit: maxBodyBytes)
        guard product.id == id else { throw StorekeeperError.badRequest("id_mismatch", "the body's id must be \(id)") }
        do {
            try await catalog.save(product)
        } catch let error as CatalogError {
            throw StorekeeperError(.unprocessable, code: "invalid_catalog", message: error.description)
        }
        return try APIJSON.response(product)
    }

    @Sendable func putCampaign(_ request: Request, context: Context) async throws -> Response {
        _ = try auth.admin(request)
        let id = try context.parameters.require("id")
        let campaign = try await APIJSON.decode(OfferCampaign.self, from: request, limit: maxBodyBytes)
        guard campaign.id == id else { throw StorekeeperError.badRequest("id_mismatch", "the body's id must be \(id)") }
        do {
            try await catalog.save(campaign)
        } catch let error as CatalogError {
            throw StorekeeperError(.unprocessable, code: "invalid_catalog", message: error.description)
        }
        return try APIJSON.response(campaign)
    }

    @Sendable func pending(_ request: Request, context: Context) async throws -> Response {
        _ = try auth.admin(request)
        let items = try await ledger.pending()
        return try APIJSON.response(
            API.PendingBody(
                pending: items.map {
                    .init(
                        transactionId: $0.transactionId, originalTransactionId: $0.originalTransactionId, bundleId: $0.bundleId,
                        productId: $0.productId, environment: $0.environment, reason: $0.reason, createdAt: $0.createdAt)
                }))
    }
}
