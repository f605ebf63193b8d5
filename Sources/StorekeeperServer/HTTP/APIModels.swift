import Foundation
import StorekeeperCore
import StorekeeperStorage

/// Request and response bodies of the HTTP API (documented in `openapi.yaml`).
enum API {
    struct CreateOrder: Decodable {
        var productId: String
        var bundleId: String?
    }

    struct OrderBody: Encodable {
        var orderId: String
        var productId: String
        var bundleId: String
        var appAccountToken: String
        var status: String
        var createdAt: Date
        var expiresAt: Date
        var transactionId: String?

        init(_ order: Order, now: Date) {
            orderId = order.id
            productId = order.productId
            bundleId = order.bundleId
            appAccountToken = order.appAccountToken.uuidString.lowercased()
            status = order.status(at: now).rawValue
            createdAt = order.createdAt
            expiresAt = order.expiresAt
            transactionId = order.transactionId
        }
    }

    struct SubmitPurchase: Decodable {
        /// StoreKit 2: `Transaction.jwsRepresentation`.
        var signedTransaction: String?
        /// Legacy: the base64 app receipt.
        var receipt: String?
        /// Legacy: the transaction the client is finishing.
        var transactionId: String?
        var orderId: String?
        var bundleId: String?
    }

    struct Restore: Decodable {
        var signedTransactions: [String]
    }

    struct GrantBody: Encodable {
        var type: String
        var amount: Int64?
        var balance: Int64?
        var entitlement: String?
        var startsAt: Date?
        var endsAt: Date?

        init(_ grant: DeliveryGrant) {
            switch grant {
            case .coins(let amount, let balance):
                type = "coins"
                self.amount = amount
                self.balance = balance
            case .entitlement(let name, let start, let end):
                type = "entitlement"
                entitlement = name
                startsAt = start
                endsAt = end
            }
        }
    }

    struct DeliveryBody: Encodable {
        var transactionId: String
        var originalTransactionId: String
        var productId: String
        var productKind: String
        var userId: String
        var environment: String
        var sandbox: Bool
        var orderId: String?
        var alreadyDelivered: Bool
        var grant: GrantBody?
        var transferred: Bool

        init(_ delivery: Delivery) {
            transactionId = delivery.transactionId
            originalTransactionId = delivery.originalTransactionId
            productId = delivery.productId
            productKind = delivery.productKind.rawValue
            userId = delivery.user.rawValue
            environment = delivery.environment
            sandbox = delivery.isSandbox
            orderId = delivery.orderId
            alreadyDelivered = !delivery.newlyDelivered
            grant = delivery.grant.map(GrantBody.init)
            transferred = delivery.transferredFrom != nil
        }
    }

    struct ItemProblem: Encodable {
        var transactionId: String?
        var code: String
        var message: String
        var outcome: String?
    }

    /// The answer to a purchase: exactly one outcome (`delivered`, `rejected`, `retry`) and what was delivered.
    struct PurchaseAnswer: Encodable {
        var outcome: String
        var code: String?
        var message: String?
        var delivery: DeliveryBody?
        var deliveries: [DeliveryBody]?
        var problems: [ItemProblem]?
    }

    struct EntitlementBody: Encodable {
        struct Source: Encodable {
            var transactionId: String
            var originalTransactionId: String
            var productId: String
            var productKind: String
            var startsAt: Date
            var endsAt: Date?
            var sandbox: Bool
            var revokedAt: Date?
        }

        var entitlement: String
        var active: Bool
        /// `null` while a permanent grant is active.
        var expiresAt: Date?
        var sandbox: Bool
        var sources: [Source]
    }

    struct TransactionBody: Encodable {
        var transactionId: String
        var originalTransactionId: String
        var productId: String
        var productKind: String
        var environment: String
        var sandbox: Bool
        var quantity: Int
        var purchaseDate: Date
        var expiresDate: Date?
        var orderId: String?
        var source: String
        var deliveredAt: Date
        /// Customer price in milliunits of `currency` (9990 is 9.99).
        var price: Int64?
        var currency: String?
        var storefront: String?
        var storefrontId: String?
        var offerId: String?
        var offerDiscountType: String?
        var offerPeriod: String?
        var appTransactionId: String?
        var transactionReason: String?
        var webOrderLineItemId: String?
        var ownershipType: String?
        var revocationType: String?
        var revocationPercentage: Int?
    }

    struct UserBody: Encodable {
        var userId: String
        var guest: Bool
        var entitlements: [EntitlementBody]
        var wallet: [String: Int64]
        var transactions: [TransactionBody]
        var orders: [OrderBody]
        var subscriptions: [SubscriptionBody]
        /// The moment entitlements are evaluated at (now, or the `at` asked for).
        var asOf: Date

        init(snapshot: AccountStore.Snapshot, orders: [Order], subscriptions: [SubscriptionStore.Record], now: Date) {
            asOf = now
            self.subscriptions = subscriptions.map(SubscriptionBody.init)
            userId = snapshot.user.rawValue
            guest = snapshot.user.isGuest
            var byName: [String: [AccountStore.Grant]] = [:]
            for grant in snapshot.grants { byName[grant.entitlement, default: []].append(grant) }
            entitlements = byName.keys.sorted().map { name in
                let grants = byName[name]!
                // A refund or revocation ends a grant at its revocation date; before that date it stood.
                let live = grants.compactMap { grant -> (start: Date, end: Date?)? in
                    guard let revoked = grant.revokedAt else { return (grant.start, grant.end) }
                    let end = min(grant.end ?? revoked, revoked)
                    return end > grant.start ? (grant.start, end) : nil
                }
                let active = live.contains { $0.start <= now && ($0.end.map { $0 > now } ?? true) }
                let permanent = live.contains { $0.end == nil }
                return EntitlementBody(
                    entitlement: name,
                    active: active,
                    expiresAt: permanent ? nil : Self.runEnd(live.compactMap { grant in grant.end.map { (grant.start, $0) } }, at: now),
                    sandbox: grants.allSatisfy { $0.environment != "Production" },
                    sources: grants.map {
                        .init(
                            transactionId: $0.transactionId,
                            originalTransactionId: $0.originalTransactionId,
                            productId: $0.productId,
                            productKind: $0.productKind.rawValue,
                            startsAt: $0.start,
                            endsAt: $0.end,
                            sandbox: $0.environment != "Production",
                            revokedAt: $0.revokedAt
                        )
                    }
                )
            }
            wallet = snapshot.balances.isEmpty ? ["coins": 0] : snapshot.balances
            transactions = snapshot.transactions.map {
                TransactionBody(
                    transactionId: $0.transactionId,
                    originalTransactionId: $0.originalTransactionId,
                    productId: $0.productId,
                    productKind: $0.productKind.rawValue,
                    environment: $0.environment,
                    sandbox: $0.environment != "Production",
                    quantity: $0.quantity,
                    purchaseDate: $0.purchaseDate,
                    expiresDate: $0.expiresDate,
                    orderId: $0.orderId,
                    source: $0.source,
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
            }
            self.orders = orders.map { OrderBody($0, now: now) }
        }

        /// When service ends: the end of the unbroken run of periods that covers `now` (passes bought back to back,
        /// renewals delivered ahead of their period), else when the latest run before `now` ended, else the end of
        /// the first run to come.
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

    struct SubscriptionBody: Encodable {
        var originalTransactionId: String
        var userId: String?
        var productId: String
        var subscriptionGroup: String?
        var state: String
        var expirationReason: String?
        var autoRenew: Bool?
        var autoRenewProductId: String?
        var expiresAt: Date?
        var gracePeriodExpiresAt: Date?
        var offerType: Int?
        var offerId: String?
        var priceIncrease: String?
        var latestTransactionId: String?
        var environment: String
        var sandbox: Bool
        var lastEvent: String
        var lastSignedDate: Date
        var checkedAt: Date?

        init(_ record: SubscriptionStore.Record) {
            originalTransactionId = record.originalTransactionId
            userId = record.user?.rawValue
            productId = record.productId
            subscriptionGroup = record.subscriptionGroup
            state = record.state.rawValue
            expirationReason = record.expirationReason
            autoRenew = record.autoRenew
            autoRenewProductId = record.autoRenewProductId
            expiresAt = record.expiresAt
            gracePeriodExpiresAt = record.gracePeriodExpiresAt
            offerType = record.offerType
            offerId = record.offerId
            priceIncrease = record.priceIncrease
            latestTransactionId = record.latestTransactionId
            environment = record.environment
            sandbox = record.environment != "Production"
            lastEvent = record.lastEvent
            lastSignedDate = record.lastSignedDate
            checkedAt = record.checkedAt
        }
    }

    struct Spend: Decodable {
        var amount: Int64
        var idempotencyKey: String
        var reason: String?
        var currency: String?
    }

    struct WalletAnswer: Encodable {
        var currency: String
        var balance: Int64
        var repeated: Bool
    }

    struct Merge: Decodable {
        /// The guest's credential (proof of possession).
        var guestToken: String?
        /// Accepted before guest credentials; refused now with `guest_token_required`.
        var deviceId: String?
    }

    struct GuestCredential: Encodable {
        var userId: String
        var guestId: String
        /// `<guestId>.<secret>`: send as `X-Storekeeper-Guest`; shown once.
        var token: String
    }

    struct GuestClaim: Decodable {
        var deviceId: String
        var signedTransactions: [String]
    }

    struct MergeAnswer: Encodable {
        var userId: String
        var mergedGuest: String
        var transactions: Int
        var entitlements: Int
        var orders: Int
        var coins: Int64
    }

    struct Eligibility: Encodable {
        struct Group: Encodable {
            var subscriptionGroup: String
            var introductoryOfferEligible: Bool
            var products: [Product]
        }

        struct Product: Encodable {
            var productId: String
            var hasIntroductoryOffer: Bool
            /// What to sell this user instead of a product whose introductory offer they may no longer have.
            var sellInstead: String?
        }

        var userId: String
        var groups: [Group]
    }

    struct OfferSignatureRequest: Decodable {
        var productId: String
        var offerId: String
        var version: String?
        var appAccountToken: String?
        var transactionId: String?
    }

    struct OfferSignatureAnswer: Encodable {
        var version: String
        var productId: String
        var offerId: String
        var campaignId: String
        var variant: String
        var keyIdentifier: String?
        var nonce: String
        var timestamp: Int64?
        var signature: String
    }

    struct AuditBody: Encodable {
        struct Entry: Encodable {
            var id: Int64
            var action: String
            var subject: String
            var amount: Int64?
            var periodStart: Date?
            var periodEnd: Date?
            var cause: String
            var detail: String?
            var createdAt: Date
        }

        var userId: String
        var entries: [Entry]
        var next: Int64?
    }

    struct Adjust: Decodable {
        var amount: Int64
        var idempotencyKey: String
        var reason: String?
    }

    struct Assign: Decodable {
        var userId: String?
        var reason: String?
    }

    struct PendingBody: Encodable {
        struct Item: Encodable {
            var transactionId: String
            var originalTransactionId: String
            var bundleId: String
            var productId: String
            var environment: String
            var reason: String
            var createdAt: Date
            /// What the purchase earned, when Apple said (milliunits of `currency`).
            var price: Int64?
            var currency: String?
            var storefront: String?
        }

        var pending: [Item]
    }

    /// `GET /v1/admin/events`: the outbox, oldest first; page with `after` = the last `position` seen.
    struct EventsBody: Encodable {
        struct Item: Encodable {
            var position: Int64
            var userId: String
            /// The user's own sequence number: 1, 2, 3, ... without gaps, in commit order.
            var sequence: Int64
            var type: String
            var subject: String
            var occurredAt: Date
            var details: [String: String]
        }

        var events: [Item]
        /// The `after` to ask with next; absent when this page was the last.
        var next: Int64?
    }

    struct Health: Encodable {
        var status: String
        var database: String
        var message: String?
    }
}
