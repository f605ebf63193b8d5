import Foundation
import SQLKit
import StorekeeperCore

/// One delivery a request asks the ledger for.
public struct DeliveryRequest: Sendable {
    public var transaction: VerifiedTransaction
    public var product: CatalogProduct
    public var orderId: String?
    public var submitter: UserID?
    public var policy: TransferPolicy

    public init(
        transaction: VerifiedTransaction, product: CatalogProduct, orderId: String?, submitter: UserID?,
        policy: TransferPolicy
    ) {
        self.transaction = transaction
        self.product = product
        self.orderId = orderId
        self.submitter = submitter
        self.policy = policy
    }
}

extension PurchaseLedger {
    /// Delivers many requests in one database transaction with set-based statements: a handful of multi-row
    /// reads and writes per batch instead of several statements per purchase.
    ///
    /// Exactly-once still rests on the `apple_transactions` primary key: the multi-row insert uses
    /// `ON CONFLICT DO NOTHING RETURNING`, and only the rows it returns get coins, grants and audit entries. The
    /// common case (an owner is clear) takes the bulk path; refusals, transfers, duplicates from another submitter
    /// and lost binding races take the single-transaction path afterwards, in the same database transaction.
    public static func deliverBatch(
        _ requests: [DeliveryRequest], now: Date, kind: DatabaseKind, on db: any SQLDatabase
    ) async throws -> [DeliveryResult] {
        var results = [DeliveryResult?](repeating: nil, count: requests.count)
        var slow: [Int] = []
        var leaderOf: [String: Int] = [:]
        var followers: [(index: Int, leader: Int)] = []
        var leaders: [Int] = []
        for (index, request) in requests.enumerated() {
            let id = request.transaction.transactionId
            if let leader = leaderOf[id] {
                let first = requests[leader]
                if first.submitter == request.submitter && first.orderId == request.orderId {
                    followers.append((index, leader))
                } else {
                    slow.append(index)
                }
            } else {
                leaderOf[id] = index
                leaders.append(index)
            }
        }

        // Orders named by id or found by appAccountToken.
        let orderIds = Set(leaders.compactMap { requests[$0].orderId })
        let tokens = Set(leaders.compactMap { requests[$0].transaction.appAccountToken?.uuidString.lowercased() })
        var ordersById: [String: OrderReference] = [:]
        var ordersByToken: [String: OrderReference] = [:]
        // Orders already completed by an earlier transaction (a renewal carries the first purchase's token).
        var completedOrders = Set<String>()
        if !orderIds.isEmpty || !tokens.isEmpty {
            let query = db.select().columns("id", "user_id", "app_account_token", "bundle_id", "product_id", "transaction_id")
                .from("orders")
            if !orderIds.isEmpty { query.orWhere("id", .in, Array(orderIds)) }
            if !tokens.isEmpty { query.orWhere("app_account_token", .in, Array(tokens)) }
            for row in try await query.all() {
                let order = try PurchaseLedger.orderReference(row: row)
                ordersById[order.id] = order
                ordersByToken[order.appAccountToken] = order
                if try row.decode(column: "transaction_id", as: String?.self) != nil { completedOrders.insert(order.id) }
            }
        }

        // Existing owners of the original transactions.
        let originals = Set(leaders.map { requests[$0].transaction.originalTransactionId })
        var bound: [String: UserID] = [:]
        for row in try await db.select().columns("original_transaction_id", "user_id").from("transaction_owners")
            .where("original_transaction_id", .in, Array(originals)).all()
        {
            bound[try row.decode(column: "original_transaction_id", as: String.self)] =
                UserID(rawValue: try row.decode(column: "user_id", as: String.self))
        }

        // Decide each leader's owner; anything but a plain owner goes the single path.
        struct Planned {
            var index: Int
            var owner: UserID
            /// The order the transaction completes, if any.
            var order: OrderReference?
        }
        var ignoredOrders: [AuditEntry] = []
        var planned: [Planned] = []
        var newBindings: [String: UserID] = [:]
        var parked: [Int] = []
        for index in leaders {
            let request = requests[index]
            let transaction = request.transaction
            let match = OrderMatch.decide(
                transaction: transaction,
                tokenOrder: transaction.appAccountToken.flatMap { ordersByToken[$0.uuidString.lowercased()] },
                namedOrder: request.orderId.flatMap { ordersById[$0] }, submitter: request.submitter)
            let boundUser = bound[transaction.originalTransactionId] ?? newBindings[transaction.originalTransactionId]
            switch Attribution.decide(
                orderUser: match.order?.user, boundUser: boundUser, submitter: request.submitter, policy: request.policy)
            {
            case .owner(let owner):
                if DeliveryRules.problem(for: request.product, transaction: transaction) != nil {
                    // Not part of the bulk statements: the single path reports the problem for this request alone.
                    slow.append(index)
                    continue
                }
                if let ignored = match.ignored {
                    ignoredOrders.append(OrderMatch.ignoredEntry(ignored, transaction: transaction, submitter: request.submitter, at: now))
                }
                if boundUser == nil { newBindings[transaction.originalTransactionId] = owner }
                planned.append(Planned(index: index, owner: owner, order: match.completes ? match.order : nil))
            case .unattributed:
                parked.append(index)
            case .refused, .transfer:
                slow.append(index)
            }
        }

        if !parked.isEmpty {
            var insert = BulkInsert(
                into: "pending_transactions", columns: PurchaseLedger.pendingColumns, suffix: "ON CONFLICT (transaction_id) DO NOTHING")
            for index in parked {
                let t = requests[index].transaction
                insert.values(PurchaseLedger.pendingRow(t, reason: "no user to attribute to", now: now))
                results[index] = .parked(transactionId: t.transactionId)
            }
            try await insert.run(on: db)
        }

        // Every bound owner was created when it was bound (all binding paths ensure the user first), so a batch of
        // renewals needs no user rows.
        let existingUsers = Set(bound.values)
        let owners = Set(planned.map(\.owner)).subtracting(existingUsers).sorted()
        if !owners.isEmpty {
            let users = db.insert(into: "users").columns("id", "kind", "created_at")
            for owner in owners { users.values([owner.rawValue, owner.isGuest ? "guest" : "account", now.millis] as [any Encodable & Sendable]) }
            try await users.ignoringConflicts(with: ["id"]).run()
        }

        // Bind new originals; a binding another process made first sends its purchases down the single path.
        if !newBindings.isEmpty {
            let insert = db.insert(into: "transaction_owners").columns(
                "original_transaction_id", "user_id", "bundle_id", "product_id", "bound_at")
            for original in newBindings.keys.sorted() {
                let request = requests[planned.first { requests[$0.index].transaction.originalTransactionId == original }!.index]
                insert.values([
                    original, newBindings[original]!.rawValue, request.transaction.bundleId, request.transaction.productId,
                    now.millis,
                ] as [any Encodable & Sendable])
            }
            let won = Set(
                try await insert.ignoringConflicts(with: ["original_transaction_id"]).returning("original_transaction_id").all()
                    .map { try $0.decode(column: "original_transaction_id", as: String.self) })
            let lost = Set(newBindings.keys).subtracting(won)
            if !lost.isEmpty {
                slow += planned.filter { lost.contains(requests[$0.index].transaction.originalTransactionId) }.map(\.index)
                planned.removeAll { lost.contains(requests[$0.index].transaction.originalTransactionId) }
            }
        }

        // The exactly-once step: only the rows this insert returns are delivered now.
        var fresh = Set<String>()
        if !planned.isEmpty {
            let ordered = planned.sorted(by: { requests[$0.index].transaction.transactionId < requests[$1.index].transaction.transactionId })
            let signedData = try await StoredSignedData.prepare(ordered.map { requests[$0.index].transaction.signedData }, on: db)
            var insert = BulkInsert(
                into: "apple_transactions",
                columns: [
                    "transaction_id", "original_transaction_id", "user_id", "bundle_id", "product_id", "product_kind",
                    "environment", "quantity", "purchase_date", "expires_date", "subscription_group", "offer_type",
                    "app_account_token", "order_id", "source", "delivered_at", "signed_data",
                ], suffix: "ON CONFLICT (transaction_id) DO NOTHING RETURNING transaction_id")
            for (plan, signedData) in zip(ordered, signedData) {
                let request = requests[plan.index]
                let t = request.transaction
                insert.values([
                    t.transactionId, t.originalTransactionId, plan.owner.rawValue, t.bundleId, t.productId,
                    request.product.kind.rawValue, t.environment, t.quantity, t.purchaseDate.millis, t.expiresDate?.millis,
                    t.subscriptionGroup ?? request.product.subscriptionGroup, t.offerType,
                    t.appAccountToken?.uuidString.lowercased(), plan.order?.id, t.source.rawValue, now.millis, signedData,
                ] as [any Encodable & Sendable])
            }
            fresh = Set(
                try await insert.all(on: db)
                    .map { try $0.decode(column: "transaction_id", as: String.self) })
        }

        // Delivered before: report who holds it.
        let repeated = planned.filter { !fresh.contains(requests[$0.index].transaction.transactionId) }
        if !repeated.isEmpty {
            var holders: [String: (user: UserID, orderId: String?)] = [:]
            for row in try await db.select().columns("transaction_id", "user_id", "order_id").from("apple_transactions")
                .where("transaction_id", .in, repeated.map { requests[$0.index].transaction.transactionId }).all()
            {
                holders[try row.decode(column: "transaction_id", as: String.self)] = (
                    UserID(rawValue: try row.decode(column: "user_id", as: String.self)),
                    try row.decode(column: "order_id", as: String?.self)
                )
            }
            for plan in repeated {
                let request = requests[plan.index]
                let holder = holders[request.transaction.transactionId]
                results[plan.index] = .delivered(
                    Delivery(
                        transactionId: request.transaction.transactionId,
                        originalTransactionId: request.transaction.originalTransactionId, productId: request.transaction.productId,
                        productKind: request.product.kind, user: holder?.user ?? plan.owner, environment: request.transaction.environment,
                        orderId: holder?.orderId, newlyDelivered: false, grant: nil))
            }
        }

        let delivering = planned.filter { fresh.contains(requests[$0.index].transaction.transactionId) }
        var audit: [AuditEntry] = ignoredOrders
        let farmed = try await PurchaseLedger.introductoryOfferRepeated(
            delivering.map { (requests[$0.index].transaction, $0.owner) }, on: db)
        for plan in delivering where farmed.contains(requests[plan.index].transaction.transactionId) {
            audit.append(PurchaseLedger.introductoryOfferEntry(requests[plan.index].transaction, owner: plan.owner, now: now))
        }
        var grants: [Int: DeliveryGrant] = [:]

        // Coins: one upsert per user for the batch's total, then each entry's balance walked back from it.
        let coinPlans = delivering.filter { requests[$0.index].product.kind == .consumable }
        if !coinPlans.isEmpty {
            var totals: [UserID: Int64] = [:]
            for plan in coinPlans {
                // Bounded per purchase (DeliveryRules.problem sent anything else to the single path), so a batch's
                // total cannot overflow; the wallet limit is checked by the upsert below.
                let amount = DeliveryRules.coins(for: requests[plan.index].product, transaction: requests[plan.index].transaction) ?? 0
                totals[plan.owner, default: 0] += amount
            }
            let limit = WalletLimits.maximumBalance
            let upsert = db.insert(into: "wallets").columns("user_id", "currency", "balance")
            for user in totals.keys.sorted() { upsert.values([user.rawValue, "coins", totals[user]!] as [any Encodable & Sendable]) }
            var finals: [UserID: Int64] = [:]
            let upserted = try await upsert.onConflict(with: ["user_id", "currency"], do: { update in
                update.set("balance", to: SQLRaw("wallets.balance + excluded.balance"))
                    .where(SQLRaw("wallets.balance <= \(limit) - excluded.balance"))
            }).returning("user_id", "balance").all()
            for row in upserted {
                finals[UserID(rawValue: try row.decode(column: "user_id", as: String.self))] = try row.decode(column: "balance", as: Int64.self)
            }
            if finals.count < totals.count {
                throw WalletLimits.limitReached("a purchase would take a wallet past the limit")
            }
            var running: [UserID: Int64] = [:]
            for (user, total) in totals { running[user] = (finals[user] ?? total) - total }
            let entries = db.insert(into: "wallet_entries").columns(
                "cause", "user_id", "currency", "amount", "balance_after", "reason", "created_at")
            for plan in coinPlans {
                let request = requests[plan.index]
                let amount = DeliveryRules.coins(for: request.product, transaction: request.transaction) ?? 0
                let balance = running[plan.owner, default: 0] + amount
                running[plan.owner] = balance
                let cause = "transaction:\(request.transaction.transactionId)"
                entries.values([cause, plan.owner.rawValue, "coins", amount, balance, request.transaction.productId, now.millis] as [any Encodable & Sendable])
                audit.append(
                    AuditEntry(
                        action: "wallet.credited", user: plan.owner, subject: "coins", amount: amount, cause: cause,
                        detail: request.transaction.productId, createdAt: now))
                grants[plan.index] = .coins(amount: amount, balance: balance)
            }
            try await entries.run()
        }

        // Entitlements; passes stack on the latest end, including passes earlier in this batch.
        let grantPlans = delivering.filter { requests[$0.index].product.kind != .consumable }
        if !grantPlans.isEmpty {
            struct PassKey: Hashable { var user: UserID; var entitlement: [UInt8] }
            var passEnds: [PassKey: Date] = [:]
            let passUsers = Set(grantPlans.filter { requests[$0.index].product.kind == .nonRenewing }.map(\.owner)).sorted()
            if !passUsers.isEmpty {
                if kind == .postgres {
                    try await db.raw("SELECT id FROM users WHERE id IN (\(binds: passUsers.map(\.rawValue))) ORDER BY id FOR UPDATE").run()
                }
                for row in try await db.raw(
                    """
                    SELECT user_id, entitlement, MAX(ends_at) AS pass_end FROM entitlement_grants
                    WHERE user_id IN (\(binds: passUsers.map(\.rawValue))) AND product_kind = 'nonRenewing' AND revoked_at IS NULL
                    GROUP BY user_id, entitlement
                    """
                ).all() {
                    if let end = try row.decode(column: "pass_end", as: Int64?.self) {
                        let key = PassKey(
                            user: UserID(rawValue: try row.decode(column: "user_id", as: String.self)),
                            entitlement: Array(try row.decode(column: "entitlement", as: String.self).utf8))
                        passEnds[key] = Date(millis: end)
                    }
                }
            }
            var insert = BulkInsert(
                into: "entitlement_grants",
                columns: [
                    "transaction_id", "user_id", "entitlement", "product_id", "product_kind", "original_transaction_id",
                    "starts_at", "ends_at", "environment", "created_at",
                ])
            for plan in grantPlans {
                let request = requests[plan.index]
                let t = request.transaction
                let entitlement = request.product.entitlement ?? request.product.id
                let key = PassKey(user: plan.owner, entitlement: Array(entitlement.utf8))
                let period = DeliveryRules.period(for: request.product, transaction: t, currentPassEnd: passEnds[key], now: now)!
                if request.product.kind == .nonRenewing, let end = period.end { passEnds[key] = end }
                insert.values([
                    t.transactionId, plan.owner.rawValue, entitlement, t.productId, request.product.kind.rawValue,
                    t.originalTransactionId, period.start.millis, period.end?.millis, t.environment, now.millis,
                ] as [any Encodable & Sendable])
                audit.append(
                    AuditEntry(
                        action: "entitlement.granted", user: plan.owner, subject: entitlement, periodStart: period.start,
                        periodEnd: period.end, cause: "transaction:\(t.transactionId)",
                        detail: t.isSandbox ? "\(t.productId) (sandbox)" : t.productId, createdAt: now))
                grants[plan.index] = .entitlement(name: entitlement, start: period.start, end: period.end)
            }
            try await insert.run(on: db)
        }

        // Orders: the first delivered transaction completes each.
        var orderTransaction: [String: (transactionId: String, user: UserID)] = [:]
        // (Only orders the transaction completes are planned with one; see OrderMatch.)
        for plan in delivering {
            if let order = plan.order, orderTransaction[order.id] == nil, !completedOrders.contains(order.id) {
                orderTransaction[order.id] = (requests[plan.index].transaction.transactionId, order.user)
            }
        }
        for orderId in orderTransaction.keys.sorted() {
            let (transactionId, user) = orderTransaction[orderId]!
            let updated = try await db.raw(
                """
                UPDATE orders SET status = 'delivered', transaction_id = \(bind: transactionId), updated_at = \(bind: now.millis)
                WHERE id = \(bind: orderId) AND transaction_id IS NULL RETURNING id
                """
            ).first()
            if updated != nil {
                audit.append(
                    AuditEntry(action: "order.delivered", user: user, subject: orderId, cause: "transaction:\(transactionId)", createdAt: now))
            }
        }

        if !audit.isEmpty {
            var insert = BulkInsert(
                into: "audit_entries",
                columns: ["user_id", "action", "subject", "amount", "period_start", "period_end", "cause", "detail", "created_at"])
            for entry in audit {
                insert.values([
                    entry.user.rawValue, entry.action, entry.subject, entry.amount, entry.periodStart?.millis,
                    entry.periodEnd?.millis, entry.cause, entry.detail, entry.createdAt.millis,
                ] as [any Encodable & Sendable])
            }
            try await insert.run(on: db)
        }

        for plan in delivering {
            let request = requests[plan.index]
            results[plan.index] = .delivered(
                Delivery(
                    transactionId: request.transaction.transactionId, originalTransactionId: request.transaction.originalTransactionId,
                    productId: request.transaction.productId, productKind: request.product.kind, user: plan.owner,
                    environment: request.transaction.environment, orderId: plan.order?.id, newlyDelivered: true,
                    grant: grants[plan.index],
                    riskFlags: farmed.contains(request.transaction.transactionId) ? [PurchaseLedger.introductoryOfferRepeated] : []))
        }

        var renewed = Set<String>()
        var earliestStart: Date?
        for plan in delivering where requests[plan.index].product.kind == .autoRenewable {
            renewed.insert(requests[plan.index].transaction.originalTransactionId)
            if case .entitlement(_, let start, _) = grants[plan.index] { earliestStart = min(earliestStart ?? start, start) }
        }
        if let earliestStart {
            try await LifecycleLedger.endReplacedPeriods(
                originals: renewed.sorted(), overlapping: earliestStart, cause: "delivery", now: now, on: db)
        }

        // Everything unusual, one at a time, seeing the bulk writes above.
        for index in slow.sorted() {
            let request = requests[index]
            results[index] = try await deliver(
                request.transaction, product: request.product, orderId: request.orderId, submitter: request.submitter,
                policy: request.policy, now: now, kind: kind, on: db)
        }
        for (index, leader) in followers {
            switch results[leader]! {
            case .delivered(var delivery):
                delivery.newlyDelivered = false
                delivery.grant = nil
                results[index] = .delivered(delivery)
            case let other:
                results[index] = other
            }
        }
        return results.map { $0! }
    }
}
