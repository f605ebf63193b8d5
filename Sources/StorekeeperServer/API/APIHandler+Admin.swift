import AppStoreWire
import Foundation
import Hummingbird
import Logging
import StorekeeperAPI
import StorekeeperCore
import StorekeeperLedger
import StorekeeperServerAPI
import StorekeeperStorage

/// The admin API (its own keys): any user's account and audit trail, the catalog, the pending-recovery list (and
/// assigning a parked purchase to a user), wallet adjustments and the outbox. Every change names the admin key in
/// its audit entry.
extension APIHandler {
    /// A user id from the path: at most ``UserID/maximumBytes`` without control characters.
    static func user(_ text: String) throws -> UserID {
        guard text.utf8.count <= UserID.maximumBytes, let user = UserID.any(text) else {
            throw StorekeeperError.invalidInput("invalid_user", "the user id must be 1-200 bytes without control characters")
        }
        return user
    }

    func adminGetUser(_ input: Operations.AdminGetUser.Input) async throws -> Operations.AdminGetUser.Output {
        let user = try Self.user(input.path.id)
        return .ok(.init(body: .json(try await userState(user, at: try Self.moment(input.query.at)))))
    }

    func adminGetAudit(_ input: Operations.AdminGetAudit.Input) async throws -> Operations.AdminGetAudit.Output {
        let user = try Self.user(input.path.id)
        let after = try Self.bounded(input.query.after, name: "after", in: 0...Int64.max, default: 0)
        let limit = try Self.bounded(input.query.limit, name: "limit", in: 1...1000, default: 200)
        let entries = try await audit.entries(for: user, after: after, limit: limit)
        return .ok(
            .init(
                body: .json(
                    .init(
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
            )
        )
    }

    func adminAdjustWallet(_ input: Operations.AdminAdjustWallet.Input) async throws -> Operations.AdminAdjustWallet.Output {
        let admin = try RequestScope.current().admin()
        let user = try Self.user(input.path.id)
        let body =
            switch input.body {
            case .json(let value): value
            }
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
        case .applied(let balance): return .ok(.init(body: .json(.init(currency: "coins", balance: balance, repeated: false))))
        case .duplicate(let balance): return .ok(.init(body: .json(.init(currency: "coins", balance: balance, repeated: true))))
        case .insufficientFunds(let balance):
            throw StorekeeperError(.conflict, code: "insufficient_funds", message: "balance is \(balance)")
        }
    }

    func adminGetCatalog(_ input: Operations.AdminGetCatalog.Input) async throws -> Operations.AdminGetCatalog.Output {
        .ok(.init(body: .json(try CatalogCoding.convert(catalog.catalog, to: Components.Schemas.Catalog.self))))
    }

    func adminPutProduct(_ input: Operations.AdminPutProduct.Input) async throws -> Operations.AdminPutProduct.Output {
        let id = try InputText.check(input.path.id, field: "productId")
        let product = try CatalogCoding.domain(input.body.value, as: CatalogProduct.self)
        guard product.id == id else { throw StorekeeperError.invalidInput("id_mismatch", "the body's id must be \(id)") }
        do {
            try await catalog.save(product, with: ledger)
        } catch let error as CatalogError {
            throw StorekeeperError(.refused, code: "invalid_catalog", message: error.description)
        }
        return .ok(.init(body: .json(try CatalogCoding.convert(product, to: Components.Schemas.CatalogProduct.self))))
    }

    func adminPutCampaign(_ input: Operations.AdminPutCampaign.Input) async throws -> Operations.AdminPutCampaign.Output {
        let id = try InputText.check(input.path.id, field: "campaignId")
        let campaign = try CatalogCoding.domain(input.body.value, as: OfferCampaign.self)
        guard campaign.id == id else { throw StorekeeperError.invalidInput("id_mismatch", "the body's id must be \(id)") }
        do {
            try await catalog.save(campaign, with: ledger)
        } catch let error as CatalogError {
            throw StorekeeperError(.refused, code: "invalid_catalog", message: error.description)
        }
        return .ok(.init(body: .json(try CatalogCoding.convert(campaign, to: Components.Schemas.OfferCampaign.self))))
    }

    func adminListPending(_ input: Operations.AdminListPending.Input) async throws -> Operations.AdminListPending.Output {
        let items = try await pendingTransactions.list()
        return .ok(
            .init(
                body: .json(
                    .init(
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
            )
        )
    }

    /// `POST /v1/admin/pending/{transactionId}/assign {userId, reason}`: support delivers a parked purchase (no user
    /// could be attributed, or the catalog lacked the product) to a user; audited on the user with the admin's name.
    func adminAssignPending(_ input: Operations.AdminAssignPending.Input) async throws -> Operations.AdminAssignPending.Output {
        let context = try RequestScope.current()
        let admin = try context.admin()
        let id = try InputText.check(input.path.transaction, field: "transactionId", maxBytes: 64)
        let body =
            switch input.body {
            case .json(let value): value
            }
        guard let user = UserID.any(try InputText.check(body.userId, field: "userId", maxBytes: UserID.maximumBytes)) else {
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
        return .ok(.init(body: .json(.init(outcome: .delivered, delivery: try .init(delivery)))))
    }

    /// `GET /v1/admin/events?after=&limit=&userId=`: the outbox, oldest first, for operators (the next release
    /// delivers it to the app's backend).
    func adminListEvents(_ input: Operations.AdminListEvents.Input) async throws -> Operations.AdminListEvents.Output {
        let after = try Self.bounded(input.query.after, name: "after", in: 0...Int64.max, default: 0)
        let limit = try Self.bounded(input.query.limit, name: "limit", in: 1...1000, default: 200)
        var user: UserID?
        if let text = input.query.userId {
            guard let id = UserID.any(try InputText.check(text, field: "userId", maxBytes: UserID.maximumBytes)) else {
                throw StorekeeperError.invalidInput("invalid_user", "userId is not a usable user id")
            }
            user = id
        }
        let page = try await ledger.events(after: after, user: user, limit: limit)
        return .ok(
            .init(
                body: .json(
                    .init(
                        events: page.map {
                            .init(
                                position: $0.position,
                                userId: $0.event.user.rawValue,
                                sequence: $0.userSequence,
                                _type: $0.event.type.rawValue,
                                subject: $0.event.subject,
                                occurredAt: $0.event.occurredAt,
                                details: .init(additionalProperties: $0.event.details)
                            )
                        },
                        next: page.count == limit ? page.last?.position : nil
                    )
                )
            )
        )
    }
}

extension Operations.AdminPutProduct.Input.Body {
    var value: Components.Schemas.CatalogProduct {
        switch self {
        case .json(let value): value
        }
    }
}

extension Operations.AdminPutCampaign.Input.Body {
    var value: Components.Schemas.OfferCampaign {
        switch self {
        case .json(let value): value
        }
    }
}
