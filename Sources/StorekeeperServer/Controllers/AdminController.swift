import Foundation
import Hummingbird
import Logging
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// The admin API (its own keys): any user's account and audit trail, the catalog, the pending-recovery list (and
/// assigning a parked purchase to a user) and wallet adjustments. Every change names the admin key in its audit entry.
struct AdminController {
    let purchases: PurchaseService
    let metrics: ServerMetrics
    let accounts: AccountStore
    let subscriptions: SubscriptionStore
    let orders: OrderStore
    let audit: AuditStore
    let ledger: Ledger
    let pendingTransactions: PendingTransactionStore
    let catalog: CatalogService

    func add(to routes: APIRoutes) {
        let admin = routes.admin
        admin.get("users/:id", use: user)
        admin.get("users/:id/audit", use: auditTrail)
        admin.post("users/:id/wallet/adjust", use: adjust)
        admin.get("catalog", use: getCatalog)
        admin.put("catalog/products/:id", use: putProduct)
        admin.put("catalog/campaigns/:id", use: putCampaign)
        admin.get("pending", use: pending)
        admin.post("pending/:transaction/assign", use: assign)
        admin.get("events", use: events)
    }

    private func userId(_ context: StorekeeperRequestContext) throws -> UserID {
        let raw = try context.parameters.require("id")
        let decoded = raw.removingPercentEncoding ?? raw
        guard decoded.utf8.count <= UserID.maximumBytes, let user = UserID.any(decoded) else {
            throw StorekeeperError.invalidInput("invalid_user", "the user id must be 1-200 bytes without control characters")
        }
        return user
    }

    @Sendable func user(_ request: Request, context: StorekeeperRequestContext) async throws -> Response {
        try await ClientController.userBody(
            try userId(context),
            request: request,
            context: context,
            accounts: accounts,
            orders: orders,
            subscriptions: subscriptions
        )
    }

    @Sendable func auditTrail(_ request: Request, context: StorekeeperRequestContext) async throws -> Response {
        let user = try userId(context)
        let after = try InputText.integer(request.uri.queryParameters.get("after"), name: "after", in: 0...Int64.max) ?? 0
        let limit = try InputText.integer(request.uri.queryParameters.get("limit"), name: "limit", in: 1...1000) ?? 200
        let entries = try await audit.entries(for: user, after: after, limit: limit)
        return try context.json(
            API.AuditBody(
                userId: user.rawValue,
                entries: entries.map {
                    .init(
                        id: $0.id,
                        action: $0.entry.action.rawValue,
                        subject: $0.entry.subject,
                        amount: $0.entry.amount,
                        periodStart: $0.entry.periodStart,
                        periodEnd: $0.entry.periodEnd,
                        cause: $0.entry.cause.rawValue,
                        detail: $0.entry.detail,
                        createdAt: $0.entry.createdAt
                    )
                },
                next: entries.count == limit ? entries.last?.id : nil
            )
        )
    }

    @Sendable func adjust(_ request: Request, context: StorekeeperRequestContext) async throws -> Response {
        let admin = try context.admin()
        let user = try userId(context)
        let body = try await request.decode(as: API.Adjust.self, context: context)
        guard body.amount != 0, body.amount.magnitude <= WalletLimits.maximumAmount.magnitude else {
            throw StorekeeperError.invalidInput("invalid_amount", "amount must be non-zero and at most ±\(WalletLimits.maximumAmount)")
        }
        try InputText.check(body.idempotencyKey, field: "idempotencyKey")
        try InputText.check(body.reason, field: "reason", maxBytes: 500)
        switch try await ledger.adjust(
            user: user,
            amount: body.amount,
            idempotencyKey: body.idempotencyKey,
            admin: admin,
            reason: body.reason
        )
        {
        case .applied(let balance): return try context.json(API.WalletAnswer(currency: "coins", balance: balance, repeated: false))
        case .duplicate(let balance): return try context.json(API.WalletAnswer(currency: "coins", balance: balance, repeated: true))
        case .insufficientFunds(let balance):
            throw StorekeeperError(.conflict, code: "insufficient_funds", message: "balance is \(balance)")
        }
    }

    @Sendable func getCatalog(_ request: Request, context: StorekeeperRequestContext) async throws -> Response {
        try context.json(catalog.catalog)
    }

    @Sendable func putProduct(_ request: Request, context: StorekeeperRequestContext) async throws -> Response {
        let id = try InputText.check(try context.parameters.require("id"), field: "productId")
        let product = try await request.decode(as: CatalogProduct.self, context: context)
        guard product.id == id else { throw StorekeeperError.invalidInput("id_mismatch", "the body's id must be \(id)") }
        do {
            try await catalog.save(product, with: ledger)
        } catch let error as CatalogError {
            throw StorekeeperError(.refused, code: "invalid_catalog", message: error.description)
        }
        return try context.json(product)
    }

    @Sendable func putCampaign(_ request: Request, context: StorekeeperRequestContext) async throws -> Response {
        let id = try InputText.check(try context.parameters.require("id"), field: "campaignId")
        let campaign = try await request.decode(as: OfferCampaign.self, context: context)
        guard campaign.id == id else { throw StorekeeperError.invalidInput("id_mismatch", "the body's id must be \(id)") }
        do {
            try await catalog.save(campaign, with: ledger)
        } catch let error as CatalogError {
            throw StorekeeperError(.refused, code: "invalid_catalog", message: error.description)
        }
        return try context.json(campaign)
    }

    @Sendable func pending(_ request: Request, context: StorekeeperRequestContext) async throws -> Response {
        let items = try await pendingTransactions.list()
        return try context.json(
            API.PendingBody(
                pending: items.map {
                    .init(
                        transactionId: $0.transactionId,
                        originalTransactionId: $0.originalTransactionId,
                        bundleId: $0.bundleId,
                        productId: $0.productId,
                        environment: $0.environment,
                        reason: $0.reason,
                        createdAt: $0.createdAt,
                        price: $0.commerce.price,
                        currency: $0.commerce.currency,
                        storefront: $0.commerce.storefront
                    )
                }
            )
        )
    }

    /// `POST /v1/admin/pending/{transactionId}/assign {userId, reason}`: support delivers a parked purchase (no user
    /// could be attributed, or the catalog lacked the product) to a user; audited on the user with the admin's name.
    @Sendable func assign(_ request: Request, context: StorekeeperRequestContext) async throws -> Response {
        let admin = try context.admin()
        let id = try InputText.check(try context.parameters.require("transaction"), field: "transactionId", maxBytes: 64)
        let body = try await request.decode(as: API.Assign.self, context: context)
        guard let userText = body.userId else { throw StorekeeperError.invalidInput("invalid_user", "name the user with userId") }
        guard let user = UserID.any(try InputText.check(userText, field: "userId", maxBytes: UserID.maximumBytes)) else {
            throw StorekeeperError.invalidInput("invalid_user", "userId is not a usable user id")
        }
        let reason = try InputText.check(body.reason ?? "assigned by support", field: "reason", maxBytes: 500)
        guard let transaction = try await pendingTransactions.parkedTransaction(id) else {
            throw StorekeeperError.notFound("not_pending", "no pending purchase \(id)")
        }
        let delivery = try await purchases.assign(transaction, to: user, admin: admin, reason: reason)
        context.logger.notice(
            "pending purchase assigned",
            metadata: ["storekeeper.transaction.id": "\(id)", "user": "\(user)", "admin": "\(admin)"]
        )
        return try context.json(API.PurchaseAnswer(outcome: "delivered", delivery: API.DeliveryBody(delivery)))
    }

    /// `GET /v1/admin/events?after=&limit=&userId=`: the outbox, oldest first, for operators (the next release
    /// delivers it to the app's backend).
    @Sendable func events(_ request: Request, context: StorekeeperRequestContext) async throws -> Response {
        let after = try InputText.integer(request.uri.queryParameters.get("after"), name: "after", in: 0...Int64.max) ?? 0
        let limit = try InputText.integer(request.uri.queryParameters.get("limit"), name: "limit", in: 1...1000) ?? 200
        var user: UserID?
        if let text = request.uri.queryParameters.get("userId").map({ String($0) }) {
            guard let id = UserID.any(try InputText.check(text, field: "userId", maxBytes: UserID.maximumBytes)) else {
                throw StorekeeperError.invalidInput("invalid_user", "userId is not a usable user id")
            }
            user = id
        }
        let page = try await ledger.events(after: after, user: user, limit: Int(limit))
        return try context.json(
            API.EventsBody(
                events: page.map {
                    .init(
                        position: $0.position,
                        userId: $0.event.user.rawValue,
                        sequence: $0.userSequence,
                        type: $0.event.type.rawValue,
                        subject: $0.event.subject,
                        occurredAt: $0.event.occurredAt,
                        details: $0.event.details
                    )
                },
                next: page.count == Int(limit) ? page.last?.position : nil
            )
        )
    }
}
