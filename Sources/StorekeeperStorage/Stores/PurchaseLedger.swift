import Foundation
import SQLKit
import StorekeeperCore

/// Delivers verified transactions exactly once (invariant 1).
///
/// Everything for one transaction happens in one database transaction: the attribution reads, the owner binding,
/// the `apple_transactions` row whose primary key is Apple's `transactionId` (inserted with
/// `ON CONFLICT DO NOTHING RETURNING`, never select-then-insert), the grant or the coins, the audit entries and
/// the order update. A repeat by anyone, from any process, finds the row and changes nothing.
public struct PurchaseLedger: Sendable {
    let provider: any DatabaseProvider
    private let batcher: DeliveryBatcher

    /// - Parameter maximumBatch: how many concurrent deliveries may share one database transaction.
    public init(provider: any DatabaseProvider, maximumBatch: Int = 256) {
        self.provider = provider
        self.batcher = DeliveryBatcher(provider: provider, maximumBatch: maximumBatch)
    }

    /// Delivers `transaction` of `product`.
    ///
    /// Concurrent calls are grouped: whichever caller gets the database next delivers every queued request in one
    /// transaction (``deliverBatch(_:now:kind:on:)``), so a burst of purchases costs a few statements and one
    /// durable commit instead of several of each per purchase. No caller returns before its delivery committed.
    ///
    /// - Parameters:
    ///   - orderId: an order the client names (legacy receipts: the `applicationUsername` it tracked); otherwise the
    ///     order is found by the transaction's `appAccountToken`.
    ///   - submitter: the authenticated caller, or the user an API-key call names.
    public func deliver(
        _ transaction: VerifiedTransaction, product: CatalogProduct, orderId: String? = nil, submitter: UserID?,
        policy: TransferPolicy, now: Date = Date()
    ) async throws -> DeliveryResult {
        try await batcher.deliver(
            DeliveryRequest(transaction: transaction, product: product, orderId: orderId, submitter: submitter, policy: policy))
    }

    /// Delivers one transaction inside the caller's database transaction (the notification processor's path).
    public static func deliver(
        _ transaction: VerifiedTransaction, product: CatalogProduct, orderId: String?, submitter: UserID?,
        policy: TransferPolicy, now: Date, kind: DatabaseKind, on db: any SQLDatabase
    ) async throws -> DeliveryResult {
        let id = transaction.transactionId
        let cause = "transaction:\(id)"
        if let problem = DeliveryRules.problem(for: product, transaction: transaction) { throw problem }

        let match = try await matchOrder(transaction, orderId: orderId, submitter: submitter, on: db)
        if let ignored = match.ignored {
            try await AuditStore.append(OrderMatch.ignoredEntry(ignored, transaction: transaction, submitter: submitter, at: now), on: db)
        }
        let order = match.order.map { (id: $0.id, user: $0.user) }

        let bound = try await db.raw(
            "SELECT user_id FROM transaction_owners WHERE original_transaction_id = \(bind: transaction.originalTransactionId)"
        ).first().map { UserID(rawValue: try $0.decode(column: "user_id", as: String.self)) }

        let decision = Attribution.decide(orderUser: order?.user, boundUser: bound, submitter: submitter, policy: policy)
        let owner: UserID
        var refusedSubmitter: UserID?
        var transferredFrom: UserID?
        switch decision {
        case .unattributed:
            try await park(transaction, reason: "no user to attribute to", now: now, on: db)
            return .parked(transactionId: id)
        case .owner(let user):
            owner = user
        case .refused(let user, let submitter):
            owner = user
            refusedSubmitter = submitter
        case .transfer(let from, let to):
            owner = to
            transferredFrom = from
        }

        try await UserStore.ensure(owner, now: now, on: db)
        if let from = transferredFrom {
            try await moveOriginal(transaction.originalTransactionId, from: from, to: owner, cause: cause, now: now, on: db)
        }
        if bound == nil {
            try await db.raw(
                """
                INSERT INTO transaction_owners (original_transaction_id, user_id, bundle_id, product_id, bound_at)
                VALUES (\(bind: transaction.originalTransactionId), \(bind: owner.rawValue), \(bind: transaction.bundleId),
                    \(bind: transaction.productId), \(bind: now.millis))
                ON CONFLICT (original_transaction_id) DO NOTHING
                """
            ).run()
        }

        let signedData = try await StoredSignedData.prepare([transaction.signedData], on: db)[0]
        let inserted = try await db.raw(
            """
            INSERT INTO apple_transactions (transaction_id, original_transaction_id, user_id, bundle_id, product_id,
                product_kind, environment, quantity, purchase_date, expires_date, subscription_group, offer_type,
                app_account_token, order_id, source, delivered_at, signed_data)
            VALUES (\(bind: id), \(bind: transaction.originalTransactionId), \(bind: owner.rawValue),
                \(bind: transaction.bundleId), \(bind: transaction.productId), \(bind: product.kind.rawValue),
                \(bind: transaction.environment), \(bind: transaction.quantity), \(bind: transaction.purchaseDate.millis),
                \(bind: transaction.expiresDate?.millis), \(bind: transaction.subscriptionGroup ?? product.subscriptionGroup),
                \(bind: transaction.offerType), \(bind: transaction.appAccountToken?.uuidString.lowercased()),
                \(bind: match.completes ? order?.id : nil), \(bind: transaction.source.rawValue), \(bind: now.millis),
                \(bind: signedData))
            ON CONFLICT (transaction_id) DO NOTHING
            RETURNING transaction_id
            """
        ).first()

        guard inserted != nil else {
            // Delivered before, by this or another request or process: nothing changes.
            let existing = try await db.raw(
                "SELECT user_id, order_id FROM apple_transactions WHERE transaction_id = \(bind: id)"
            ).first()
            let holder = try existing.map { UserID(rawValue: try $0.decode(column: "user_id", as: String.self)) } ?? owner
            if let refusedSubmitter {
                try await recordRefusal(transaction, owner: holder, submitter: refusedSubmitter, cause: cause, now: now, on: db)
                return .ownedByAnotherUser(transactionId: id)
            }
            return .delivered(
                Delivery(
                    transactionId: id, originalTransactionId: transaction.originalTransactionId,
                    productId: transaction.productId, productKind: product.kind, user: holder,
                    environment: transaction.environment, orderId: try existing?.decode(column: "order_id", as: String?.self),
                    newlyDelivered: false, grant: nil, transferredFrom: transferredFrom))
        }

        let grant: DeliveryGrant
        switch product.kind {
        case .consumable:
            let amount = DeliveryRules.coins(for: product, transaction: transaction) ?? 0
            let applied = try await WalletStore.apply(
                user: owner, currency: "coins", amount: amount, cause: cause, reason: transaction.productId,
                allowNegative: true, now: now, knownNew: true, on: db)
            guard case .applied(let balance) = applied else {
                throw StorekeeperError(.internal, code: "ledger_inconsistent", message: "coins for \(id) already credited")
            }
            grant = .coins(amount: amount, balance: balance)
        case .nonConsumable, .nonRenewing, .autoRenewable:
            let entitlement = product.entitlement ?? product.id
            var passEnd: Date?
            if product.kind == .nonRenewing {
                if kind == .postgres {
                    // Two passes bought at once must stack, not both start from the same end.
                    try await db.raw("SELECT id FROM users WHERE id = \(bind: owner.rawValue) FOR UPDATE").run()
                }
                passEnd = try await db.raw(
                    """
                    SELECT MAX(ends_at) AS pass_end FROM entitlement_grants
                    WHERE user_id = \(bind: owner.rawValue) AND entitlement = \(bind: entitlement)
                      AND product_kind = 'nonRenewing' AND revoked_at IS NULL
                    """
                ).first()?.decode(column: "pass_end", as: Int64?.self).map(Date.init(millis:))
            }
            let period = DeliveryRules.period(for: product, transaction: transaction, currentPassEnd: passEnd, now: now)!
            try await db.raw(
                """
                INSERT INTO entitlement_grants (transaction_id, user_id, entitlement, product_id, product_kind,
                    original_transaction_id, starts_at, ends_at, environment, created_at)
                VALUES (\(bind: id), \(bind: owner.rawValue), \(bind: entitlement), \(bind: transaction.productId),
                    \(bind: product.kind.rawValue), \(bind: transaction.originalTransactionId), \(bind: period.start.millis),
                    \(bind: period.end?.millis), \(bind: transaction.environment), \(bind: now.millis))
                """
            ).run()
            try await AuditStore.append(
                AuditEntry(
                    action: "entitlement.granted", user: owner, subject: entitlement, periodStart: period.start,
                    periodEnd: period.end, cause: cause,
                    detail: transaction.isSandbox ? "\(transaction.productId) (sandbox)" : transaction.productId,
                    createdAt: now), on: db)
            grant = .entitlement(name: entitlement, start: period.start, end: period.end)
            if product.kind == .autoRenewable {
                try await LifecycleLedger.endReplacedPeriods(
                    originals: [transaction.originalTransactionId], overlapping: period.start, cause: cause, now: now, on: db)
            }
        }

        var riskFlags: [String] = []
        if try await introductoryOfferRepeated([(transaction, owner)], on: db).contains(id) {
            riskFlags.append(PurchaseLedger.introductoryOfferRepeated)
            try await AuditStore.append(Self.introductoryOfferEntry(transaction, owner: owner, now: now), on: db)
        }
        if let order, match.completes {
            let updated = try await db.raw(
                """
                UPDATE orders SET status = 'delivered', transaction_id = \(bind: id), updated_at = \(bind: now.millis)
                WHERE id = \(bind: order.id) AND transaction_id IS NULL
                RETURNING id
                """
            ).first()
            if updated != nil {
                try await AuditStore.append(
                    AuditEntry(action: "order.delivered", user: order.user, subject: order.id, cause: cause, createdAt: now),
                    on: db)
            }
        }
        if let refusedSubmitter {
            try await recordRefusal(transaction, owner: owner, submitter: refusedSubmitter, cause: cause, now: now, on: db)
            return .ownedByAnotherUser(transactionId: id)
        }
        return .delivered(
            Delivery(
                transactionId: id, originalTransactionId: transaction.originalTransactionId, productId: transaction.productId,
                productKind: product.kind, user: owner, environment: transaction.environment,
                orderId: match.completes ? order?.id : nil, newlyDelivered: true, grant: grant, transferredFrom: transferredFrom,
                riskFlags: riskFlags))
    }

    /// The risk flag for an introductory offer a user already had in the group under another subscription.
    public static let introductoryOfferRepeated = "introductory_offer_repeated"

    /// Of `delivered` (fresh introductory-offer transactions and their owners), the transaction ids whose owner had
    /// an introductory offer in the same group under another original transaction, that is another Apple ID
    /// (seed 001's trial farming). Apple charged, so they are delivered; the flag makes them visible.
    static func introductoryOfferRepeated(
        _ delivered: [(transaction: VerifiedTransaction, owner: UserID)], on db: any SQLDatabase
    ) async throws -> Set<String> {
        let intro = delivered.filter { $0.transaction.isIntroductoryOffer && $0.transaction.subscriptionGroup != nil }
        guard !intro.isEmpty else { return [] }
        var earlier: [UserID: [(group: String, original: String)]] = [:]
        for row in try await db.raw(
            """
            SELECT user_id, subscription_group, original_transaction_id FROM apple_transactions
            WHERE offer_type = 1 AND user_id IN (\(binds: Set(intro.map(\.owner.rawValue)).sorted()))
              AND subscription_group IN (\(binds: Set(intro.compactMap(\.transaction.subscriptionGroup)).sorted()))
            """
        ).all() {
            earlier[UserID(rawValue: try row.decode(column: "user_id", as: String.self)), default: []].append(
                (try row.decode(column: "subscription_group", as: String.self), try row.decode(column: "original_transaction_id", as: String.self)))
        }
        var flagged = Set<String>()
        for (transaction, owner) in intro
        where (earlier[owner] ?? []).contains(where: { $0.group == transaction.subscriptionGroup && $0.original != transaction.originalTransactionId }) {
            flagged.insert(transaction.transactionId)
        }
        return flagged
    }

    static func introductoryOfferEntry(_ transaction: VerifiedTransaction, owner: UserID, now: Date) -> AuditEntry {
        AuditEntry(
            action: "risk.introductory_offer_repeated", user: owner, subject: transaction.originalTransactionId,
            cause: "transaction:\(transaction.transactionId)",
            detail: "\(transaction.productId): an introductory offer again in group \(transaction.subscriptionGroup ?? "?"), "
                + "under another Apple ID; delivered (Apple charged)", createdAt: now)
    }

    /// The order a transaction belongs to: the one its own `appAccountToken` names, and a client-named one only
    /// as ``OrderMatch`` allows.
    static func matchOrder(
        _ transaction: VerifiedTransaction, orderId: String?, submitter: UserID?, on db: any SQLDatabase
    ) async throws -> OrderMatch.Decision {
        var tokenOrder: OrderReference?
        var namedOrder: OrderReference?
        if let token = transaction.appAccountToken?.uuidString.lowercased() {
            tokenOrder = try await db.raw(
                "SELECT id, user_id, bundle_id, product_id, app_account_token FROM orders WHERE app_account_token = \(bind: token)"
            ).first().map(orderReference(row:))
        }
        if let orderId {
            namedOrder = try await db.raw(
                "SELECT id, user_id, bundle_id, product_id, app_account_token FROM orders WHERE id = \(bind: orderId)"
            ).first().map(orderReference(row:))
        }
        return OrderMatch.decide(transaction: transaction, tokenOrder: tokenOrder, namedOrder: namedOrder, submitter: submitter)
    }

    static func orderReference(row: any SQLRow) throws -> OrderReference {
        OrderReference(
            id: try row.decode(column: "id", as: String.self),
            user: UserID(rawValue: try row.decode(column: "user_id", as: String.self)),
            bundleId: try row.decode(column: "bundle_id", as: String.self),
            productId: try row.decode(column: "product_id", as: String.self),
            appAccountToken: try row.decode(column: "app_account_token", as: String.self))
    }

    /// Moves a subscription or unlock (its binding, transactions and live grants) to another user, audited on both.
    static func moveOriginal(
        _ original: String, from: UserID, to: UserID, cause: String, now: Date, on db: any SQLDatabase
    ) async throws {
        let grants = try await db.raw(
            """
            SELECT transaction_id, entitlement, starts_at, ends_at FROM entitlement_grants
            WHERE original_transaction_id = \(bind: original) AND user_id = \(bind: from.rawValue) AND revoked_at IS NULL
            """
        ).all()
        try await db.raw(
            """
            UPDATE entitlement_grants SET user_id = \(bind: to.rawValue)
            WHERE original_transaction_id = \(bind: original) AND user_id = \(bind: from.rawValue)
            """
        ).run()
        // Consumables stay: their coins may already be spent.
        try await db.raw(
            """
            UPDATE apple_transactions SET user_id = \(bind: to.rawValue)
            WHERE original_transaction_id = \(bind: original) AND user_id = \(bind: from.rawValue) AND product_kind <> 'consumable'
            """
        ).run()
        try await db.raw(
            """
            UPDATE transaction_owners SET user_id = \(bind: to.rawValue) WHERE original_transaction_id = \(bind: original)
            """
        ).run()
        // The subscription, its refunds and Apple's refund questions go with it, so later news lands on the new owner.
        try await db.raw(
            "UPDATE subscriptions SET user_id = \(bind: to.rawValue) WHERE original_transaction_id = \(bind: original)"
        ).run()
        for table in ["revocations", "consumption_requests"] {
            try await db.raw(
                """
                UPDATE \(unsafeRaw: table) SET user_id = \(bind: to.rawValue)
                WHERE original_transaction_id = \(bind: original) AND user_id = \(bind: from.rawValue)
                """
            ).run()
        }
        for grant in grants {
            let entitlement = try grant.decode(column: "entitlement", as: String.self)
            let start = Date(millis: try grant.decode(column: "starts_at", as: Int64.self))
            let end = try grant.decode(column: "ends_at", as: Int64?.self).map(Date.init(millis:))
            try await AuditStore.append(
                AuditEntry(
                    action: "entitlement.transferred_out", user: from, subject: entitlement, periodStart: start,
                    periodEnd: end, cause: cause, detail: "original transaction \(original) moved to \(to.rawValue)",
                    createdAt: now), on: db)
            try await AuditStore.append(
                AuditEntry(
                    action: "entitlement.transferred_in", user: to, subject: entitlement, periodStart: start, periodEnd: end,
                    cause: cause, detail: "original transaction \(original) moved from \(from.rawValue)", createdAt: now),
                on: db)
        }
        if grants.isEmpty {
            try await AuditStore.append(
                AuditEntry(
                    action: "transaction.transferred", user: to, subject: original, cause: cause,
                    detail: "bound to this user instead of \(from.rawValue)", createdAt: now), on: db)
        }
    }

    static func recordRefusal(
        _ transaction: VerifiedTransaction, owner: UserID, submitter: UserID, cause: String, now: Date,
        on db: any SQLDatabase
    ) async throws {
        try await AuditStore.append(
            AuditEntry(
                action: "transaction.claim_refused", user: owner, subject: transaction.originalTransactionId, cause: cause,
                detail: "submitted by \(submitter.rawValue); the transfer policy is refuse", createdAt: now), on: db)
    }

    /// Transactions nobody could be attributed to, oldest first.
    public func pending(limit: Int = 200) async throws -> [PendingTransaction] {
        try await provider.withSession { db in
            try await db.raw(
                """
                SELECT transaction_id, original_transaction_id, bundle_id, product_id, environment, reason, signed_data, created_at
                FROM pending_transactions p WHERE resolved_at IS NULL
                  AND NOT EXISTS (SELECT 1 FROM apple_transactions a WHERE a.transaction_id = p.transaction_id)
                ORDER BY created_at LIMIT \(bind: limit)
                """
            ).all().map(PendingTransaction.init(row:))
        }
    }

    /// Marks a parked transaction resolved (delivered through another path).
    public func resolvePending(_ transactionId: String, now: Date = Date()) async throws {
        try await provider.withSession { db in
            try await db.raw(
                "UPDATE pending_transactions SET resolved_at = \(bind: now.millis) WHERE transaction_id = \(bind: transactionId)"
            ).run()
        }
    }
}

/// A verified transaction waiting on the pending-recovery list for a user.
public struct PendingTransaction: Sendable, Hashable {
    public var transactionId: String
    public var originalTransactionId: String
    public var bundleId: String
    public var productId: String
    public var environment: String
    public var reason: String
    public var signedData: String?
    public var createdAt: Date

    init(row: any SQLRow) throws {
        transactionId = try row.decode(column: "transaction_id", as: String.self)
        originalTransactionId = try row.decode(column: "original_transaction_id", as: String.self)
        bundleId = try row.decode(column: "bundle_id", as: String.self)
        productId = try row.decode(column: "product_id", as: String.self)
        environment = try row.decode(column: "environment", as: String.self)
        reason = try row.decode(column: "reason", as: String.self)
        signedData = try row.decode(column: "signed_data", as: String?.self)
        createdAt = Date(millis: try row.decode(column: "created_at", as: Int64.self))
    }
}

extension PurchaseLedger {
    /// Parks a transaction inside the caller's transaction with what delivering it later needs (a receipt entry
    /// has no JWS to decode again); a second park of the same transaction changes nothing.
    public static func park(_ transaction: VerifiedTransaction, reason: String, now: Date, on db: any SQLDatabase) async throws {
        var insert = BulkInsert(into: "pending_transactions", columns: pendingColumns, suffix: "ON CONFLICT (transaction_id) DO NOTHING")
        insert.values(pendingRow(transaction, reason: reason, now: now))
        try await insert.run(on: db)
    }

    static let pendingColumns = [
        "transaction_id", "original_transaction_id", "bundle_id", "product_id", "environment", "reason", "signed_data",
        "created_at", "purchase_date", "expires_date", "quantity", "offer_type", "app_account_token", "subscription_group",
        "source",
    ]

    static func pendingRow(_ t: VerifiedTransaction, reason: String, now: Date) -> [any Encodable & Sendable] {
        [
            t.transactionId, t.originalTransactionId, t.bundleId, t.productId, t.environment, reason, t.signedData, now.millis,
            t.purchaseDate.millis, t.expiresDate?.millis, t.quantity, t.offerType, t.appAccountToken?.uuidString.lowercased(),
            t.subscriptionGroup, t.source.rawValue,
        ]
    }

    /// Puts a verified transaction on the pending-recovery list (no user, or a product the catalog lacks), so
    /// support can see and deliver it.
    public func park(_ transaction: VerifiedTransaction, reason: String, now: Date = Date()) async throws {
        try await provider.withSession { db in try await Self.park(transaction, reason: reason, now: now, on: db) }
    }

    /// A parked transaction as it was verified, to deliver now; nil when it was never parked, a 409 when it is
    /// resolved or delivered already.
    public func parkedTransaction(_ transactionId: String) async throws -> VerifiedTransaction? {
        try await provider.withSession { db in
            guard
                let row = try await db.raw(
                    """
                    SELECT p.*, (SELECT 1 FROM apple_transactions a WHERE a.transaction_id = p.transaction_id) AS delivered
                    FROM pending_transactions p WHERE transaction_id = \(bind: transactionId)
                    """
                ).first()
            else { return nil }
            if try row.decode(column: "resolved_at", as: Int64?.self) != nil || row.decode(column: "delivered", as: Int64?.self) != nil {
                throw StorekeeperError(.conflict, code: "not_pending", message: "transaction \(transactionId) is resolved or delivered already")
            }
            guard let purchase = try row.decode(column: "purchase_date", as: Int64?.self) else {
                // Parked before its details were kept: only a JWS can be read back.
                throw StorekeeperError(
                    .conflict, code: "missing_details",
                    message: "transaction \(transactionId) was parked without its details; ask the customer to restore purchases")
            }
            return VerifiedTransaction(
                transactionId: transactionId, originalTransactionId: try row.decode(column: "original_transaction_id", as: String.self),
                bundleId: try row.decode(column: "bundle_id", as: String.self), productId: try row.decode(column: "product_id", as: String.self),
                environment: try row.decode(column: "environment", as: String.self), purchaseDate: Date(millis: purchase),
                expiresDate: try row.decode(column: "expires_date", as: Int64?.self).map(Date.init(millis:)),
                quantity: Int(try row.decode(column: "quantity", as: Int64?.self) ?? 1),
                appAccountToken: try row.decode(column: "app_account_token", as: String?.self).flatMap(UUID.init(uuidString:)),
                offerType: try row.decode(column: "offer_type", as: Int64?.self).map(Int.init),
                subscriptionGroup: try row.decode(column: "subscription_group", as: String?.self),
                source: VerifiedTransaction.Source(rawValue: try row.decode(column: "source", as: String?.self) ?? "") ?? .signedTransaction,
                signedData: try row.decode(column: "signed_data", as: String?.self))
        }
    }

    /// Delivers a parked transaction to `user` on an operator's word: the delivery and its audit entries (the user's
    /// `transaction.assigned` naming the operator and the reason, and the parked row's `resolved_by` and
    /// `assigned_user`) commit together; a transaction delivered meanwhile is not delivered again.
    public func assign(
        _ transaction: VerifiedTransaction, product: CatalogProduct, to user: UserID, admin: String, reason: String,
        now: Date = Date()
    ) async throws -> DeliveryResult {
        let kind = provider.kind
        return try await provider.withTransaction { db in
            let claimed = try await db.raw(
                """
                UPDATE pending_transactions SET resolved_at = \(bind: now.millis), resolved_by = \(bind: admin),
                    assigned_user = \(bind: user.rawValue)
                WHERE transaction_id = \(bind: transaction.transactionId) AND resolved_at IS NULL RETURNING transaction_id
                """
            ).first()
            guard claimed != nil else {
                throw StorekeeperError(.conflict, code: "not_pending", message: "transaction \(transaction.transactionId) is no longer pending")
            }
            let result = try await Self.deliver(
                transaction, product: product, orderId: nil, submitter: user, policy: .refuse, now: now, kind: kind, on: db)
            guard case .delivered(let delivery) = result, delivery.newlyDelivered, delivery.user == user else {
                throw StorekeeperError(
                    .conflict, code: "already_delivered",
                    message: "transaction \(transaction.transactionId) is delivered or bound to another user already")
            }
            try await AuditStore.append(
                AuditEntry(
                    action: "transaction.assigned", user: user, subject: transaction.transactionId, cause: "admin:\(admin)",
                    detail: "\(transaction.productId) assigned from the pending-recovery list: \(reason)", createdAt: now), on: db)
            return result
        }
    }
}
