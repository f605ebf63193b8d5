import Foundation
import StorekeeperAPI
import StorekeeperCore
import StorekeeperLedger
import StorekeeperServerAPI
import StorekeeperStorage

/// A domain value's raw string as the document's enum; a value the document does not list is a server bug, answered
/// as a 500 rather than sent as an undocumented answer.
func documented<E: RawRepresentable>(_ raw: String, as type: E.Type = E.self) throws -> E where E.RawValue == String {
    guard let value = E(rawValue: raw) else {
        throw StorekeeperError(.internal, code: "undocumented_value", message: "\(raw) is not a documented \(E.self)")
    }
    return value
}

extension Components.Schemas.Order {
    init(_ order: Order, now: Date) throws {
        self.init(
            orderId: order.id,
            productId: order.productId,
            bundleId: order.bundleId,
            appAccountToken: order.appAccountToken.uuidString.lowercased(),
            obfuscatedAccountId: order.appAccountToken.uuidString.lowercased(),
            status: try documented(order.status(at: now).rawValue),
            createdAt: order.createdAt,
            expiresAt: order.expiresAt,
            transactionId: order.transactionId
        )
    }
}

extension Components.Schemas.Grant {
    init(_ grant: DeliveryGrant) {
        switch grant {
        case .coins(let amount, let balance):
            self.init(_type: .coins, amount: amount, balance: balance)
        case .entitlement(let name, let start, let end):
            self.init(_type: .entitlement, entitlement: name, startsAt: start, endsAt: end)
        }
    }
}

extension Components.Schemas.Delivery {
    init(_ delivery: Delivery) throws {
        self.init(
            transactionId: delivery.transactionId,
            originalTransactionId: delivery.originalTransactionId,
            productId: delivery.productId,
            productKind: try documented(delivery.productKind.rawValue),
            userId: delivery.user.rawValue,
            environment: delivery.environment.rawValue,
            sandbox: delivery.isSandbox,
            orderId: delivery.orderId,
            alreadyDelivered: !delivery.newlyDelivered,
            grant: delivery.grant.map(Components.Schemas.Grant.init),
            transferred: delivery.transferredFrom != nil
        )
    }
}

extension Components.Schemas.Subscription {
    init(_ record: SubscriptionStore.Record) throws {
        self.init(
            originalTransactionId: record.originalTransactionId,
            userId: record.user?.rawValue,
            productId: record.productId,
            subscriptionGroup: record.subscriptionGroup,
            state: try documented(record.state.rawValue),
            expirationReason: record.expirationReason,
            autoRenew: record.autoRenew,
            autoRenewProductId: record.autoRenewProductId,
            expiresAt: record.expiresAt,
            gracePeriodExpiresAt: record.gracePeriodExpiresAt,
            offerType: record.offerType,
            offerId: record.offerId,
            priceIncrease: try record.priceIncrease.map { try documented($0) },
            latestTransactionId: record.latestTransactionId,
            billingPlan: try record.billingPlan.map { try documented($0) },
            commitment: record.commitment.map { commitment in
                .init(
                    paymentsMade: commitment.paymentsMade,
                    paymentsTotal: commitment.paymentsTotal,
                    paymentsLeft: commitment.paymentsLeft,
                    endsAt: commitment.endsAt,
                    price: commitment.price,
                    renewsAfterCommitment: commitment.renewsAfterCommitment
                )
            },
            environment: record.environment,
            sandbox: record.environment != "Production",
            lastEvent: record.lastEvent,
            lastSignedDate: record.lastSignedDate,
            checkedAt: record.checkedAt
        )
    }
}

extension Components.Schemas.User {
    /// A user's state as of `now`: entitlements evaluated at that moment, the wallet, transactions with what they
    /// cost, orders and subscriptions.
    init(snapshot: AccountStore.Snapshot, orders: [Order], subscriptions: [SubscriptionStore.Record], now: Date) throws {
        var byName: [String: [AccountStore.Grant]] = [:]
        for grant in snapshot.grants { byName[grant.entitlement, default: []].append(grant) }
        let entitlements = try byName.keys.sorted().map { name in
            let grants = byName[name] ?? []
            // A refund or revocation ends a grant at its revocation date; before that date it stood.
            let live = grants.compactMap { grant -> (start: Date, end: Date?)? in
                guard let revoked = grant.revokedAt else { return (grant.start, grant.end) }
                let end = min(grant.end ?? revoked, revoked)
                return end > grant.start ? (grant.start, end) : nil
            }
            let active = live.contains { $0.start <= now && ($0.end.map { $0 > now } ?? true) }
            let permanent = live.contains { $0.end == nil }
            return Components.Schemas.Entitlement(
                entitlement: name,
                active: active,
                expiresAt: permanent ? nil : Self.runEnd(live.compactMap { grant in grant.end.map { (grant.start, $0) } }, at: now),
                sandbox: grants.allSatisfy { $0.environment != "Production" },
                sources: try grants.map {
                    .init(
                        transactionId: $0.transactionId,
                        originalTransactionId: $0.originalTransactionId,
                        productId: $0.productId,
                        productKind: try documented($0.productKind.rawValue),
                        startsAt: $0.start,
                        endsAt: $0.end,
                        sandbox: $0.environment != "Production",
                        revokedAt: $0.revokedAt,
                        seatClaimId: $0.seatClaimId
                    )
                }
            )
        }
        self.init(
            asOf: now,
            subscriptions: try subscriptions.map(Components.Schemas.Subscription.init),
            userId: snapshot.user.rawValue,
            guest: snapshot.user.isGuest,
            entitlements: entitlements,
            wallet: .init(additionalProperties: snapshot.balances.isEmpty ? ["coins": 0] : snapshot.balances),
            transactions: try snapshot.transactions.map {
                .init(
                    transactionId: $0.transactionId,
                    originalTransactionId: $0.originalTransactionId,
                    store: try documented($0.store.apiName),
                    productId: $0.productId,
                    productKind: try documented($0.productKind.rawValue),
                    environment: $0.environment,
                    sandbox: $0.environment != "Production",
                    quantity: $0.quantity,
                    purchaseDate: $0.purchaseDate,
                    expiresDate: $0.expiresDate,
                    orderId: $0.orderId,
                    source: try documented($0.source),
                    deliveredAt: $0.deliveredAt,
                    price: $0.commerce.price,
                    currency: $0.commerce.currency,
                    storefront: $0.commerce.storefront,
                    storefrontId: $0.commerce.storefrontId,
                    offerId: $0.commerce.offerId,
                    offerDiscountType: $0.commerce.offerDiscountType,
                    offerPeriod: $0.commerce.offerPeriod,
                    appTransactionId: $0.commerce.appTransactionId,
                    transactionReason: $0.commerce.transactionReason,
                    webOrderLineItemId: $0.commerce.webOrderLineItemId,
                    ownershipType: $0.commerce.ownershipType,
                    revocationType: $0.commerce.revocationType,
                    revocationPercentage: $0.commerce.revocationPercentage
                )
            },
            orders: try orders.map { try Components.Schemas.Order($0, now: now) }
        )
    }

    /// When service ends: the end of the unbroken run of periods that covers `now` (passes bought back to back,
    /// renewals delivered ahead of their period), else when the latest run before `now` ended, else the end of the
    /// first run to come.
    static func runEnd(_ periods: [(start: Date, end: Date)], at now: Date) -> Date? {
        var runs: [(start: Date, end: Date)] = []
        for period in periods.sorted(by: { $0.start < $1.start }) {
            if let last = runs.last, period.start <= last.end {
                runs[runs.count - 1].end = max(last.end, period.end)
            } else {
                runs.append(period)
            }
        }
        if let covering = runs.first(where: { $0.start <= now && now < $0.end }) { return covering.end }
        return runs.last(where: { $0.end <= now })?.end ?? runs.first?.end
    }
}

extension Components.Schemas.NotificationItem {
    init(_ stored: NotificationInbox.Stored) throws {
        self.init(
            id: stored.received.id,
            format: try documented(stored.received.format),
            bundleId: stored.received.bundleId,
            notificationType: stored.received.notificationType,
            subtype: stored.received.subtype,
            originalTransactionId: stored.received.originalTransactionId,
            signedDate: stored.received.signedDate,
            status: try documented(stored.status),
            attempts: stored.attempts,
            lastError: stored.lastError,
            receivedAt: stored.receivedAt
        )
    }
}

/// The catalog's wire form is the catalog file's format, which the domain types' `Codable` defines; converting
/// through it keeps one definition of that format (and the domain's own validation on the way in).
enum CatalogCoding {
    static func convert<Value: Decodable>(_ value: some Encodable, to type: Value.Type) throws -> Value {
        try JSONDecoder().decode(Value.self, from: try JSONEncoder().encode(value))
    }

    /// A catalog entry from the API as the domain type, whose decoding checks what the document cannot say; its
    /// refusal is the caller's mistake (400), named like a body that is not what the document asks for.
    static func domain<Value: Decodable>(_ value: some Encodable, as type: Value.Type) throws -> Value {
        do {
            return try convert(value, to: type)
        } catch let error as DecodingError {
            throw StorekeeperError.invalidInput("malformed_json", APIRequestDecoder.describe(error))
        }
    }
}
