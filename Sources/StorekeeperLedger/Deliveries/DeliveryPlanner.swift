import Foundation
import Logging
import SQLKit
import StorekeeperCore
import StorekeeperStorage

/// One delivery a caller asks the ledger for.
public struct DeliveryRequest: Sendable {
    public var transaction: VerifiedTransaction
    public var product: CatalogProduct
    /// An order the client names (legacy receipts: the `applicationUsername` it tracked); a claim, see ``OrderMatch``.
    public var orderId: String?
    /// The authenticated caller, or the user an API-key call names.
    public var submitter: UserID?
    public var policy: TransferPolicy

    public init(transaction: VerifiedTransaction, product: CatalogProduct, orderId: String?, submitter: UserID?, policy: TransferPolicy) {
        self.transaction = transaction
        self.product = product
        self.orderId = orderId
        self.submitter = submitter
        self.policy = policy
    }
}

/// Delivers verified transactions exactly once (invariant 1), any number at a time, with set-based statements.
///
/// Every request is planned the same way, whether it arrives alone or with hundreds of others: its order (by its own
/// `appAccountToken`, or one the client names), the user its original transaction is bound to, and the caller decide
/// its owner (``Attribution``). A plain owner, a refused submitter, a transfer and a park are variants of one plan.
/// Exactly-once rests on the `store_transactions` primary key: the rows the multi-row insert returns are delivered
/// now (coins, grants, order, audit, outbox), the others were delivered before and change nothing. Requests for the
/// same transaction run in rounds, each seeing the previous round's writes; a binding another process made between
/// reading and binding sends its requests to the next round to be decided again.
enum DeliveryPlanner {
    private struct Plan {
        var index: Int
        var owner: UserID
        /// The order the transaction completes.
        var order: OrderReference?
        var refusedSubmitter: UserID?
        var transferFrom: UserID?
    }

    /// ``deliver(_:in:)`` in a savepoint; when the plan fails on the database, each half is planned again in a savepoint
    /// of its own, down to the request that fails, so one bad request costs the others a few extra plans (about
    /// 2·log₂ n) and never their batch. A lost transaction still throws.
    static func deliverSeparatingFailures(_ requests: [DeliveryRequest], in uow: UnitOfWork) async throws -> [Result<DeliveryResult, any Error>] {
        guard !requests.isEmpty else { return [] }
        do {
            return try await uow.savepoint("sk_plan") { own in try await deliver(requests, in: own) }
        } catch let error as SavepointLost {
            throw error
        } catch {
            guard requests.count > 1 else {
                uow.logger.warning(
                    "a delivery failed; the rest of its batch goes on",
                    metadata: ["transactionId": "\(requests[0].transaction.transactionId)", "error": "\(error)"]
                )
                return [.failure(error)]
            }
            let middle = requests.count / 2
            let first = try await deliverSeparatingFailures(Array(requests[..<middle]), in: uow)
            return first + (try await deliverSeparatingFailures(Array(requests[middle...]), in: uow))
        }
    }

    static func deliver(_ requests: [DeliveryRequest], in uow: UnitOfWork) async throws -> [Result<DeliveryResult, any Error>] {
        var results = [Result<DeliveryResult, any Error>?](repeating: nil, count: requests.count)
        var remaining: [Int] = []
        for (index, request) in requests.enumerated() {
            if let problem = DeliveryRules.problem(for: request.product, transaction: request.transaction) {
                results[index] = .failure(problem)
            } else {
                remaining.append(index)
            }
        }
        // A repeat of a request in the same round (same transaction, caller and order) gets its leader's answer.
        var followers: [(index: Int, leader: Int)] = []
        var rounds = 0
        while !remaining.isEmpty {
            rounds += 1
            guard rounds <= 64 else {
                throw LedgerError.deliveryDidNotSettle
            }
            var round: [Int] = []
            var later: [Int] = []
            var leaders: [String: Int] = [:]
            for index in remaining {
                let request = requests[index]
                if let leader = leaders[request.transaction.transactionId] {
                    let first = requests[leader]
                    if first.submitter == request.submitter && first.orderId == request.orderId && first.policy == request.policy {
                        followers.append((index, leader))
                    } else {
                        later.append(index)
                    }
                } else {
                    leaders[request.transaction.transactionId] = index
                    round.append(index)
                }
            }
            let requeued = try await deliverRound(round, of: requests, into: &results, in: uow)
            remaining = later + requeued
        }
        for (index, leader) in followers {
            switch results[leader]! {
            case .success(.delivered(var delivery)):
                delivery.newlyDelivered = false
                delivery.grant = nil
                delivery.riskFlags = []
                results[index] = .success(.delivered(delivery))
            case let other:
                results[index] = other
            }
        }
        return results.map { $0! }
    }

    /// Plans and writes one round (at most one request per transaction); returns the requests to decide again.
    private static func deliverRound(
        _ round: [Int],
        of requests: [DeliveryRequest],
        into results: inout [Result<DeliveryResult, any Error>?],
        in uow: UnitOfWork
    ) async throws -> [Int] {
        let db = uow.db
        let now = uow.now

        // Orders named by id or found by appAccountToken, and the owners of the original transactions.
        let found = try await OrdersTable.find(
            ids: Set(round.compactMap { requests[$0].orderId }),
            tokens: Set(round.compactMap { requests[$0].transaction.appAccountToken?.uuidString.lowercased() }),
            on: db
        )
        var ordersById: [String: OrderReference] = [:]
        var ordersByToken: [String: OrderReference] = [:]
        // Orders already completed by an earlier transaction (a renewal carries the first purchase's token).
        var completedOrders = Set<String>()
        for (order, completed) in found {
            ordersById[order.id] = order
            ordersByToken[order.appAccountToken] = order
            if completed { completedOrders.insert(order.id) }
        }
        var bound = try await TransactionOwnersTable.owners(of: Set(round.map { requests[$0].transaction.originalTransactionId }), on: db)

        // Decide each request's owner.
        var plans: [Plan] = []
        var parked: [Int] = []
        var newBindings: [String: (user: UserID, index: Int)] = [:]
        for index in round {
            let request = requests[index]
            let transaction = request.transaction
            let match = OrderMatch.decide(
                transaction: transaction,
                tokenOrder: transaction.appAccountToken.flatMap { ordersByToken[$0.uuidString.lowercased()] },
                namedOrder: request.orderId.flatMap { ordersById[$0] },
                submitter: request.submitter
            )
            if let ignored = match.ignored {
                uow.record(OrderMatch.ignoredEntry(ignored, transaction: transaction, submitter: request.submitter, at: now))
            }
            let original = transaction.originalTransactionId
            let boundUser = bound[original] ?? newBindings[original]?.user
            var plan = Plan(index: index, owner: UserID(rawValue: ""), order: match.completes ? match.order : nil)
            switch Attribution.decide(orderUser: match.order?.user, boundUser: boundUser, submitter: request.submitter, policy: request.policy) {
            case .unattributed:
                parked.append(index)
                continue
            case .owner(let owner):
                plan.owner = owner
            case .refused(let owner, let submitter):
                plan.owner = owner
                plan.refusedSubmitter = submitter
            case .transfer(let from, let to):
                plan.owner = to
                plan.transferFrom = from
            }
            if boundUser == nil { newBindings[original] = (plan.owner, index) }
            plans.append(plan)
        }

        // Transfers first: the transaction's subscription or unlock moves, then the delivery lands on the new owner.
        for plan in plans {
            guard let from = plan.transferFrom else { continue }
            let original = requests[plan.index].transaction.originalTransactionId
            try await UsersTable.ensure([plan.owner], now: now, on: db)
            try await UserDataMover.move(
                from: from,
                to: plan.owner,
                scope: .original(original),
                cause: .transaction(requests[plan.index].transaction.transactionId),
                in: uow
            )
            bound[original] = plan.owner
        }

        // Users that are new here (every bound owner was created when it was bound), and the new bindings. A binding
        // another process made first sends its requests to the next round.
        let known = Set(bound.values)
        try await UsersTable.ensure(plans.map(\.owner).filter { !known.contains($0) }, now: now, on: db)
        var requeue: [Int] = []
        if !newBindings.isEmpty {
            let won = try await TransactionOwnersTable.bind(
                newBindings.map { original, binding in
                    let t = requests[binding.index].transaction
                    return .init(original: original, user: binding.user, bundleId: t.bundleId, productId: t.productId)
                },
                now: now,
                on: db
            )
            let lost = Set(newBindings.keys).subtracting(won)
            if !lost.isEmpty {
                requeue = plans.filter { lost.contains(requests[$0.index].transaction.originalTransactionId) }.map(\.index)
                plans.removeAll { lost.contains(requests[$0.index].transaction.originalTransactionId) }
            }
        }

        if !parked.isEmpty {
            try await PendingTransactionsTable.insert(
                parked.map { (requests[$0].transaction, "no user to attribute to") },
                now: now,
                on: db
            )
            // Nobody to tell: no user could be attributed (an event goes to the user it is assigned to later).
            for index in parked { results[index] = .success(.parked(transactionId: requests[index].transaction.transactionId)) }
        }

        // The exactly-once step: only the rows this insert returns are delivered now.
        let fresh = try await StoreTransactionsTable.insert(
            plans.map { plan in
                let request = requests[plan.index]
                return .init(
                    transaction: request.transaction,
                    owner: plan.owner,
                    productKind: request.product.kind,
                    subscriptionGroup: request.product.subscriptionGroup,
                    orderId: plan.order?.id
                )
            },
            now: now,
            on: db
        )

        // Delivered before: report who holds it; a refused submitter's claim is recorded on the holder.
        let repeated = plans.filter { !fresh.contains(requests[$0.index].transaction.transactionId) }
        let holders = try await StoreTransactionsTable.holders(of: repeated.map { requests[$0.index].transaction.transactionId }, on: db)
        for plan in repeated {
            let request = requests[plan.index]
            let holder = holders[request.transaction.transactionId]
            if let submitter = plan.refusedSubmitter {
                uow.record(refusal(request.transaction, owner: holder?.user ?? plan.owner, submitter: submitter, at: now))
                results[plan.index] = .success(.ownedByAnotherUser(transactionId: request.transaction.transactionId))
                continue
            }
            results[plan.index] = .success(
                .delivered(
                    Delivery(
                        transactionId: request.transaction.transactionId,
                        originalTransactionId: request.transaction.originalTransactionId,
                        productId: request.transaction.productId,
                        productKind: request.product.kind,
                        user: holder?.user ?? plan.owner,
                        environment: request.transaction.environment,
                        orderId: holder?.orderId,
                        newlyDelivered: false,
                        grant: nil,
                        transferredFrom: plan.transferFrom
                    )
                )
            )
        }

        let delivering = plans.filter { fresh.contains(requests[$0.index].transaction.transactionId) }
        var grants: [Int: DeliveryGrant] = [:]
        try await creditCoins(delivering.filter { requests[$0.index].product.kind == .consumable }, of: requests, grants: &grants, in: uow)
        try await grantEntitlements(delivering.filter { requests[$0.index].product.kind != .consumable }, of: requests, grants: &grants, in: uow)
        let farmed = try await introductoryOfferRepeated(delivering.map { (requests[$0.index].transaction, $0.owner) }, on: db)
        for plan in delivering where farmed.contains(requests[plan.index].transaction.transactionId) {
            uow.record(introductoryOfferEntry(requests[plan.index].transaction, owner: plan.owner, now: now))
        }

        // Orders: the first delivered transaction completes each.
        var completing: [String: (transactionId: String, user: UserID)] = [:]
        for plan in delivering {
            if let order = plan.order, completing[order.id] == nil, !completedOrders.contains(order.id) {
                completing[order.id] = (requests[plan.index].transaction.transactionId, order.user)
            }
        }
        for orderId in completing.keys.sorted() {
            let (transactionId, user) = completing[orderId]!
            if try await OrdersTable.complete(orderId, transactionId: transactionId, now: now, on: db) {
                uow.record(AuditEntry(action: .orderDelivered, user: user, subject: orderId, cause: .transaction(transactionId), createdAt: now))
            }
        }

        // A new period of a subscription ends the period it replaces (upgrades, crossgrades; seed 001's vipA/vipB).
        var renewed = Set<String>()
        var earliestStart: Date?
        for plan in delivering where requests[plan.index].product.kind == .autoRenewable {
            renewed.insert(requests[plan.index].transaction.originalTransactionId)
            if case .entitlement(_, let start, _) = grants[plan.index] { earliestStart = min(earliestStart ?? start, start) }
        }
        if let earliestStart {
            for changed in try await EntitlementGrantsTable.endReplacedPeriods(originals: renewed.sorted(), overlapping: earliestStart, on: db) {
                uow.record(
                    AuditEntry(
                        action: .entitlementReplaced,
                        user: changed.user,
                        subject: changed.entitlement,
                        periodStart: changed.start,
                        periodEnd: changed.end,
                        cause: .delivery,
                        detail:
                            "period of \(changed.transactionId) ends where the next transaction of its subscription starts (upgrade or crossgrade)",
                        createdAt: now
                    )
                )
            }
        }

        // A purchase that came without a token of its own (an offer code, a promoted purchase, one made outside the
        // app, a restore) gets its user's token set at Apple (Set App Account Token), so its renewals and
        // notifications name the user. Consumables are left alone: nothing later of theirs would carry it; so are a
        // family member's copy and an assigned purchase, which Apple refuses to set a token on (4000185, 4000227).
        try await AccountTokensTable.request(
            delivering.compactMap { plan in
                let request = requests[plan.index]
                let t = request.transaction
                guard t.store == .appStore, t.appAccountToken == nil, request.product.kind != .consumable, t.commerce.isSale else {
                    return nil
                }
                return .init(
                    originalTransactionId: t.originalTransactionId,
                    user: plan.owner,
                    bundleId: t.bundleId,
                    environment: t.environment.rawValue
                )
            },
            now: now,
            on: db
        )

        for plan in delivering {
            let request = requests[plan.index]
            let t = request.transaction
            let delivery = Delivery(
                transactionId: t.transactionId,
                originalTransactionId: t.originalTransactionId,
                productId: t.productId,
                productKind: request.product.kind,
                user: plan.owner,
                environment: t.environment,
                orderId: plan.order?.id,
                newlyDelivered: true,
                grant: grants[plan.index],
                transferredFrom: plan.transferFrom,
                riskFlags: farmed.contains(t.transactionId) ? [introductoryOfferRepeatedFlag] : []
            )
            uow.emit(deliveredEvent(delivery, request: request, at: now))
            if let submitter = plan.refusedSubmitter {
                uow.record(refusal(t, owner: plan.owner, submitter: submitter, at: now))
                results[plan.index] = .success(.ownedByAnotherUser(transactionId: t.transactionId))
            } else {
                results[plan.index] = .success(.delivered(delivery))
            }
        }
        return requeue
    }

    // MARK: Writes of fresh deliveries

    /// Coins: one balance change per user for the round's total (within the wallet's limit, else the round fails and
    /// its requests are retried one by one), then each entry's balance walked back from it.
    private static func creditCoins(
        _ plans: [Plan],
        of requests: [DeliveryRequest],
        grants: inout [Int: DeliveryGrant],
        in uow: UnitOfWork
    ) async throws {
        guard !plans.isEmpty else { return }
        var totals: [UserID: Int64] = [:]
        for plan in plans {
            // Bounded per purchase (DeliveryRules.problem refused anything else), so a round's total cannot overflow.
            totals[plan.owner, default: 0] +=
                DeliveryRules.coins(for: requests[plan.index].product, transaction: requests[plan.index].transaction) ?? 0
        }
        let finals = try await WalletsTable.add(totals.map { ($0.key, $0.value) }, currency: "coins", on: uow.db)
        guard finals.count == totals.count else { throw WalletLimits.limitReached("a purchase would take a wallet past the limit") }
        var running: [UserID: Int64] = [:]
        for (user, total) in totals { running[user] = finals[user]! - total }
        var entries: [WalletEntriesTable.Row] = []
        for plan in plans {
            let request = requests[plan.index]
            let amount = DeliveryRules.coins(for: request.product, transaction: request.transaction) ?? 0
            let balance = running[plan.owner, default: 0] + amount
            running[plan.owner] = balance
            let key = WalletKey.transaction(request.transaction.transactionId)
            entries.append(
                .init(key: key, user: plan.owner, currency: "coins", amount: amount, balanceAfter: balance, reason: request.transaction.productId)
            )
            uow.record(
                AuditEntry(
                    action: .walletCredited,
                    user: plan.owner,
                    subject: "coins",
                    amount: amount,
                    cause: .wallet(key),
                    detail: request.transaction.productId,
                    createdAt: uow.now
                )
            )
            grants[plan.index] = .coins(amount: amount, balance: balance)
        }
        try await WalletEntriesTable.insert(entries, now: uow.now, on: uow.db)
    }

    /// Entitlements; passes stack on the latest end, including passes earlier in this round.
    private static func grantEntitlements(
        _ plans: [Plan],
        of requests: [DeliveryRequest],
        grants: inout [Int: DeliveryGrant],
        in uow: UnitOfWork
    ) async throws {
        guard !plans.isEmpty else { return }
        var passEnds = try await EntitlementGrantsTable.passEnds(
            of: plans.filter { requests[$0.index].product.kind == .nonRenewing }.map(\.owner),
            kind: uow.kind,
            on: uow.db
        )
        var rows: [EntitlementGrantsTable.Row] = []
        for plan in plans {
            let request = requests[plan.index]
            let t = request.transaction
            let entitlement = request.product.entitlement ?? request.product.id
            let period = DeliveryRules.period(
                for: request.product,
                transaction: t,
                currentPassEnd: passEnds[plan.owner]?[entitlement],
                now: uow.now
            )!
            if request.product.kind == .nonRenewing, let end = period.end { passEnds[plan.owner, default: [:]][entitlement] = end }
            rows.append(
                .init(
                    transactionId: t.transactionId,
                    user: plan.owner,
                    entitlement: entitlement,
                    productId: t.productId,
                    productKind: request.product.kind,
                    originalTransactionId: t.originalTransactionId,
                    start: period.start,
                    end: period.end,
                    environment: t.environment.rawValue
                )
            )
            uow.record(
                AuditEntry(
                    action: .entitlementGranted,
                    user: plan.owner,
                    subject: entitlement,
                    periodStart: period.start,
                    periodEnd: period.end,
                    cause: .transaction(t.transactionId),
                    detail: t.isSandbox ? "\(t.productId) (sandbox)" : t.productId,
                    createdAt: uow.now
                )
            )
            grants[plan.index] = .entitlement(name: entitlement, start: period.start, end: period.end)
        }
        try await EntitlementGrantsTable.insert(rows, now: uow.now, on: uow.db)
    }

    // MARK: Risk, refusals, events

    /// The risk flag for an introductory offer a user already had in the group under another subscription.
    static let introductoryOfferRepeatedFlag = "introductory_offer_repeated"

    /// Of fresh introductory-offer transactions and their owners, the ids whose owner had an introductory offer in
    /// the same group under another original transaction, that is another Apple ID (seed 001's trial farming).
    /// Apple charged, so they are delivered; the flag makes them visible.
    private static func introductoryOfferRepeated(
        _ delivered: [(transaction: VerifiedTransaction, owner: UserID)],
        on db: any SQLDatabase
    ) async throws -> Set<String> {
        let intro = delivered.filter { $0.transaction.isIntroductoryOffer && $0.transaction.subscriptionGroup != nil }
        guard !intro.isEmpty else { return [] }
        let earlier = try await StoreTransactionsTable.introductoryOffers(
            users: Set(intro.map(\.owner)),
            groups: Set(intro.compactMap(\.transaction.subscriptionGroup)),
            on: db
        )
        var flagged = Set<String>()
        for (transaction, owner) in intro
        where (earlier[owner] ?? []).contains(where: { $0.group == transaction.subscriptionGroup && $0.original != transaction.originalTransactionId }
        ) {
            flagged.insert(transaction.transactionId)
        }
        return flagged
    }

    private static func introductoryOfferEntry(_ transaction: VerifiedTransaction, owner: UserID, now: Date) -> AuditEntry {
        AuditEntry(
            action: .riskIntroductoryOfferRepeated,
            user: owner,
            subject: transaction.originalTransactionId,
            cause: .transaction(transaction.transactionId),
            detail: "\(transaction.productId): an introductory offer again in group \(transaction.subscriptionGroup ?? "?"), "
                + "under another Apple ID; delivered (Apple charged)",
            createdAt: now
        )
    }

    private static func refusal(_ transaction: VerifiedTransaction, owner: UserID, submitter: UserID, at now: Date) -> AuditEntry {
        AuditEntry(
            action: .transactionClaimRefused,
            user: owner,
            subject: transaction.originalTransactionId,
            cause: .transaction(transaction.transactionId),
            detail: "submitted by \(submitter.rawValue); the transfer policy is refuse",
            createdAt: now
        )
    }

    private static func deliveredEvent(_ delivery: Delivery, request: DeliveryRequest, at now: Date) -> LedgerEvent {
        let transaction = request.transaction
        // `via`: how the purchase reached Storekeeper — Apple's notification (no submitter) or what the client sent.
        var details = [
            "transactionId": delivery.transactionId, "originalTransactionId": delivery.originalTransactionId,
            "productId": delivery.productId, "productKind": delivery.productKind.rawValue, "environment": delivery.environment.rawValue,
            "purchasedAt": String(transaction.purchaseDate.millis),
            "via": request.submitter == nil ? "notification" : transaction.source.rawValue,
        ]
        if let orderId = delivery.orderId { details["orderId"] = orderId }
        switch delivery.grant {
        case .coins(let amount, let balance)?:
            details["coins"] = String(amount)
            details["balance"] = String(balance)
        case .entitlement(let name, let start, let end)?:
            details["entitlement"] = name
            details["startsAt"] = String(start.millis)
            if let end { details["endsAt"] = String(end.millis) }
        case nil:
            break
        }
        if let price = transaction.commerce.price, let currency = transaction.commerce.currency {
            details["price"] = String(price)
            details["currency"] = currency
        }
        return LedgerEvent(type: .delivered, user: delivery.user, subject: delivery.transactionId, occurredAt: now, details: details)
    }
}
