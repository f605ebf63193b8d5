import Foundation
import SQLKit
import StorekeeperCore

/// Applies what Apple says after a purchase: subscription state per `originalTransactionId`, refunds and
/// revocations taken back (and restored), grants extended through grace periods and renewal extensions, and
/// consumption requests queued. Every function runs inside the caller's transaction and audits what it changes.
public enum LifecycleLedger {
    /// What taking a transaction back did.
    public enum RevocationOutcome: Sendable, Hashable {
        /// Taken back now: grants cut from the revocation date, coins taken (and forgiven under the floor policy).
        case revoked(user: UserID, coinsTaken: Int64, coinsForgiven: Int64)
        /// Already taken back by an earlier message: nothing changes.
        case alreadyRevoked
        /// Storekeeper never delivered this transaction: nothing to take back.
        case notDelivered
    }

    // MARK: Subscription state

    /// Merges `snapshot` into the subscription's stored state unless a newer message was applied already (state
    /// is ordered by Apple's `signedDate`). Fields the snapshot leaves nil keep their stored values. A change of
    /// state is audited on the subscriber. Returns whether the snapshot was applied.
    @discardableResult
    public static func applySnapshot(
        _ snapshot: SubscriptionSnapshot, cause: String, now: Date, kind: DatabaseKind, on db: any SQLDatabase
    ) async throws -> Bool {
        try await applySnapshots([(snapshot, cause)], now: now, kind: kind, on: db)[0]
    }

    /// Merges many snapshots (any number per subscription, folded in `signedDate` order) with a few set-based
    /// statements: one read of the subscriptions and their owners, one multi-row upsert, one multi-row audit insert.
    /// Returns, per snapshot, whether it was applied (false: a newer message was applied before).
    public static func applySnapshots(
        _ snapshots: [(snapshot: SubscriptionSnapshot, cause: String)], now: Date, kind: DatabaseKind, on db: any SQLDatabase
    ) async throws -> [Bool] {
        guard !snapshots.isEmpty else { return [] }
        let originals = Array(Set(snapshots.map(\.snapshot.originalTransactionId))).sorted()
        let lock: SQLQueryString = kind == .postgres ? " ORDER BY original_transaction_id FOR UPDATE" : ""
        var stored: [String: StoredSubscription] = [:]
        for row in try await db.raw(
            "SELECT * FROM subscriptions WHERE original_transaction_id IN (\(binds: originals))" + lock
        ).all() {
            let record = try StoredSubscription(row: row)
            stored[record.snapshot.originalTransactionId] = record
        }
        var owners: [String: String] = [:]
        for row in try await db.raw(
            "SELECT original_transaction_id, user_id FROM transaction_owners WHERE original_transaction_id IN (\(binds: originals))"
        ).all() {
            owners[try row.decode(column: "original_transaction_id", as: String.self)] = try row.decode(column: "user_id", as: String.self)
        }
        var applied = [Bool](repeating: false, count: snapshots.count)
        var changed = Set<String>()
        var audits: [AuditEntry] = []
        let order = snapshots.indices.sorted { snapshots[$0].snapshot.signedDate < snapshots[$1].snapshot.signedDate }
        for index in order {
            let (snapshot, cause) = snapshots[index]
            let original = snapshot.originalTransactionId
            let previous = stored[original]
            if let previous, previous.snapshot.signedDate > snapshot.signedDate { continue }
            let merged = StoredSubscription.merge(snapshot, into: previous?.snapshot)
            stored[original] = StoredSubscription(snapshot: merged)
            applied[index] = true
            changed.insert(original)
            let state = merged.state ?? .active
            if let user = owners[original], previous?.snapshot.state != state {
                var detail = "\(merged.productId) \(merged.event)"
                if let reason = merged.expirationReason, state == .expired || state == .refunded { detail += " (\(reason))" }
                audits.append(
                    AuditEntry(
                        action: "subscription.\(state.rawValue)", user: UserID(rawValue: user), subject: original,
                        periodEnd: merged.gracePeriodExpiresAt ?? merged.expiresAt, cause: cause, detail: detail, createdAt: now))
            }
        }
        guard !changed.isEmpty else { return applied }
        let updated = [
            "user_id", "product_id", "subscription_group", "environment", "state", "expiration_reason", "auto_renew",
            "auto_renew_product_id", "expires_at", "grace_expires_at", "offer_type", "offer_id", "price_increase",
            "latest_transaction_id", "last_event", "last_signed_date", "updated_at",
        ]
        var insert = BulkInsert(
            into: "subscriptions",
            columns: [
                "original_transaction_id", "user_id", "bundle_id", "product_id", "subscription_group", "environment", "state",
                "expiration_reason", "auto_renew", "auto_renew_product_id", "expires_at", "grace_expires_at", "offer_type",
                "offer_id", "price_increase", "latest_transaction_id", "last_event", "last_signed_date", "updated_at",
            ],
            suffix: "ON CONFLICT (original_transaction_id) DO UPDATE SET "
                + updated.map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
        for original in changed.sorted() {
            let s = stored[original]!.snapshot
            insert.values([
                s.originalTransactionId, owners[original], s.bundleId, s.productId, s.subscriptionGroup, s.environment,
                (s.state ?? .active).rawValue, s.expirationReason, s.autoRenew.map { $0 ? 1 : 0 }, s.autoRenewProductId,
                s.expiresAt?.millis, s.gracePeriodExpiresAt?.millis, s.offerType, s.offerId, s.priceIncrease,
                s.latestTransactionId, s.event, s.signedDate.millis, now.millis,
            ] as [any Encodable & Sendable])
        }
        try await insert.run(on: db)
        if !audits.isEmpty {
            var rows = BulkInsert(
                into: "audit_entries",
                columns: ["user_id", "action", "subject", "amount", "period_start", "period_end", "cause", "detail", "created_at"])
            for entry in audits {
                rows.values([
                    entry.user.rawValue, entry.action, entry.subject, entry.amount, entry.periodStart?.millis,
                    entry.periodEnd?.millis, entry.cause, entry.detail, entry.createdAt.millis,
                ] as [any Encodable & Sendable])
            }
            try await rows.run(on: db)
        }
        return applied
    }

    /// Ends subscription grants where a later transaction of the same subscription starts: an upgrade or a
    /// same-duration crossgrade replaces the current period at once (reference §10), so two transactions of one
    /// subscription never give two overlapping periods (seed 001's vipA/vipB), in whatever order they arrive.
    ///
    /// `overlapping` is the earliest start among the grants just written: only a grant ending after it can
    /// overlap one of them (an older grant it replaces, or the new grant itself when a later one exists), so the
    /// renewal that merely follows its predecessor checks one or two rows per subscription, not its whole history.
    public static func endReplacedPeriods(
        originals: [String], overlapping earliestStart: Date, cause: String, now: Date, on db: any SQLDatabase
    ) async throws {
        guard !originals.isEmpty else { return }
        let next: SQLQueryString = """
            (SELECT MIN(n.starts_at) FROM entitlement_grants n
             WHERE n.original_transaction_id = entitlement_grants.original_transaction_id
               AND n.starts_at > entitlement_grants.starts_at)
            """
        let rows = try await db.raw(
            "UPDATE entitlement_grants SET ends_at = " + next
                + " WHERE original_transaction_id IN (\(binds: originals)) AND product_kind = 'autoRenewable'"
                + " AND ends_at > \(bind: earliestStart.millis) AND ends_at > " + next
                + " RETURNING transaction_id, user_id, entitlement, starts_at, ends_at"
        ).all()
        for row in rows {
            let transactionId = try row.decode(column: "transaction_id", as: String.self)
            try await AuditStore.append(
                AuditEntry(
                    action: "entitlement.replaced", user: UserID(rawValue: try row.decode(column: "user_id", as: String.self)),
                    subject: try row.decode(column: "entitlement", as: String.self),
                    periodStart: Date(millis: try row.decode(column: "starts_at", as: Int64.self)),
                    periodEnd: try row.decode(column: "ends_at", as: Int64?.self).map(Date.init(millis:)), cause: cause,
                    detail: "period of \(transactionId) ends where the next transaction of its subscription starts (upgrade or crossgrade)",
                    createdAt: now), on: db)
        }
    }

    /// Extends a transaction's live grant to `end` when that is later (grace period, renewal date extension).
    public static func extendGrant(
        transactionId: String, to end: Date, reason: String, cause: String, now: Date, on db: any SQLDatabase
    ) async throws {
        let rows = try await db.raw(
            """
            UPDATE entitlement_grants SET ends_at = \(bind: end.millis)
            WHERE transaction_id = \(bind: transactionId) AND ends_at IS NOT NULL AND ends_at < \(bind: end.millis)
              AND revoked_at IS NULL
            RETURNING user_id, entitlement, starts_at
            """
        ).all()
        for row in rows {
            try await AuditStore.append(
                AuditEntry(
                    action: "entitlement.extended", user: UserID(rawValue: try row.decode(column: "user_id", as: String.self)),
                    subject: try row.decode(column: "entitlement", as: String.self),
                    periodStart: Date(millis: try row.decode(column: "starts_at", as: Int64.self)), periodEnd: end,
                    cause: cause, detail: reason, createdAt: now), on: db)
        }
    }

    // MARK: Refunds and revocations

    /// Takes back what `transactionId` delivered, from `date` on: the grant's remaining time (membership, pass,
    /// unlock) or the coins (the policy decides whether spent coins become a debt or are forgiven). A transaction
    /// already taken back is left alone, so a second `REFUND` changes nothing.
    ///
    /// `decidedAt` is the signed date of Apple's message: a refund older than a reversal already applied (a late,
    /// out-of-order delivery) changes nothing.
    public static func revoke(
        transactionId: String, at date: Date, kind revocation: LifecycleEffect.Revocation, policy: CoinClawbackPolicy,
        decidedAt: Date, cause: String, now: Date, kind: DatabaseKind, on db: any SQLDatabase
    ) async throws -> RevocationOutcome {
        guard
            let delivered = try await db.raw(
                """
                SELECT user_id, product_id, product_kind, original_transaction_id FROM apple_transactions
                WHERE transaction_id = \(bind: transactionId)
                """
            ).first()
        else { return .notDelivered }
        let user = UserID(rawValue: try delivered.decode(column: "user_id", as: String.self))
        let productId = try delivered.decode(column: "product_id", as: String.self)
        let productKind = try delivered.decode(column: "product_kind", as: String.self)
        let original = try delivered.decode(column: "original_transaction_id", as: String.self)
        let lock = kind == .postgres ? " FOR UPDATE" : ""
        let previous = try await db.raw(
            SQLQueryString("SELECT status, generation, decided_at FROM revocations WHERE transaction_id = ")
                + "\(bind: transactionId)" + SQLQueryString(lock)
        ).first()
        if try previous?.decode(column: "status", as: String.self) == "revoked" { return .alreadyRevoked }
        if let previous, try previous.decode(column: "decided_at", as: Int64.self) > decidedAt.millis { return .alreadyRevoked }
        let generation = (try previous?.decode(column: "generation", as: Int64.self) ?? 0) + 1
        let what = revocation == .refund ? "refunded by Apple" : "Family Sharing access withdrawn"

        let grants = try await db.raw(
            """
            UPDATE entitlement_grants SET revoked_at = \(bind: date.millis)
            WHERE transaction_id = \(bind: transactionId) AND revoked_at IS NULL
            RETURNING entitlement, starts_at, ends_at
            """
        ).all()
        for grant in grants {
            let start = Date(millis: try grant.decode(column: "starts_at", as: Int64.self))
            try await AuditStore.append(
                AuditEntry(
                    action: "entitlement.revoked", user: user, subject: try grant.decode(column: "entitlement", as: String.self),
                    periodStart: max(start, date), periodEnd: try grant.decode(column: "ends_at", as: Int64?.self).map(Date.init(millis:)),
                    cause: cause, detail: "\(productId) \(transactionId) \(what); service from the revocation date on removed",
                    createdAt: now), on: db)
        }

        var taken: Int64 = 0
        var forgiven: Int64 = 0
        if productKind == ProductKind.consumable.rawValue,
            let credited = try await db.raw(
                "SELECT currency, amount FROM wallet_entries WHERE cause = \(bind: "transaction:\(transactionId)")"
            ).first()
        {
            let currency = try credited.decode(column: "currency", as: String.self)
            let amount = try credited.decode(column: "amount", as: Int64.self)
            let balance =
                try await db.raw(
                    SQLQueryString("SELECT balance FROM wallets WHERE user_id = ") + "\(bind: user.rawValue)"
                        + " AND currency = \(bind: currency)" + SQLQueryString(lock)
                ).first()?.decode(column: "balance", as: Int64.self) ?? 0
            (taken, forgiven) = policy.clawback(refunded: amount, balance: balance)
            if taken > 0 {
                _ = try await WalletStore.apply(
                    user: user, currency: currency, amount: -taken, cause: "refund:\(transactionId):\(generation)",
                    reason: "\(productId) \(what)", allowNegative: true, now: now, on: db)
            }
            if forgiven > 0 {
                try await AuditStore.append(
                    AuditEntry(
                        action: "wallet.clawback_forgiven", user: user, subject: currency, amount: forgiven, cause: cause,
                        detail: "\(forgiven) refunded \(currency) were already spent; forgiven under the floor policy",
                        createdAt: now), on: db)
            }
        }
        try await db.raw(
            """
            INSERT INTO revocations (transaction_id, user_id, original_transaction_id, product_id, product_kind, kind, status,
                revoked_at, generation, coins_taken, coins_forgiven, decided_at, updated_at)
            VALUES (\(bind: transactionId), \(bind: user.rawValue), \(bind: original), \(bind: productId), \(bind: productKind),
                \(bind: revocation.rawValue), 'revoked', \(bind: date.millis), \(bind: generation), \(bind: taken),
                \(bind: forgiven), \(bind: decidedAt.millis), \(bind: now.millis))
            ON CONFLICT (transaction_id) DO UPDATE SET kind = excluded.kind, status = 'revoked',
                revoked_at = excluded.revoked_at, generation = excluded.generation, coins_taken = excluded.coins_taken,
                coins_forgiven = excluded.coins_forgiven, decided_at = excluded.decided_at, updated_at = excluded.updated_at
            """
        ).run()
        try await AuditStore.append(
            AuditEntry(
                action: revocation == .refund ? "transaction.refunded" : "transaction.revoked", user: user,
                subject: transactionId, amount: taken > 0 ? -taken : nil, periodStart: date, cause: cause,
                detail: "\(productId) \(what)" + (forgiven > 0 ? "; \(forgiven) coins forgiven" : ""), createdAt: now),
            on: db)
        return .revoked(user: user, coinsTaken: taken, coinsForgiven: forgiven)
    }

    /// Restores what a refund took back (`REFUND_REVERSED`): the grants stand again and the coins taken are
    /// credited back. Returns false when nothing was taken back.
    /// A reversal arriving before its refund is remembered, so the late refund changes nothing.
    @discardableResult
    public static func reinstate(
        transactionId: String, decidedAt: Date, cause: String, now: Date, kind: DatabaseKind, on db: any SQLDatabase
    ) async throws -> Bool {
        let lock = kind == .postgres ? " FOR UPDATE" : ""
        let found = try await db.raw(
            SQLQueryString("SELECT user_id, product_id, status, generation, coins_taken, decided_at FROM revocations WHERE transaction_id = ")
                + "\(bind: transactionId)" + SQLQueryString(lock)
        ).first()
        guard let row = found else {
            try await db.raw(
                """
                INSERT INTO revocations (transaction_id, user_id, original_transaction_id, product_id, product_kind, kind, status,
                    revoked_at, generation, coins_taken, coins_forgiven, decided_at, updated_at)
                SELECT transaction_id, user_id, original_transaction_id, product_id, product_kind, 'refund', 'reinstated',
                    \(bind: decidedAt.millis), 0, 0, 0, \(bind: decidedAt.millis), \(bind: now.millis)
                FROM apple_transactions WHERE transaction_id = \(bind: transactionId)
                ON CONFLICT (transaction_id) DO NOTHING
                """
            ).run()
            return false
        }
        guard try row.decode(column: "status", as: String.self) == "revoked",
            try row.decode(column: "decided_at", as: Int64.self) <= decidedAt.millis
        else { return false }
        let user = UserID(rawValue: try row.decode(column: "user_id", as: String.self))
        let productId = try row.decode(column: "product_id", as: String.self)
        let generation = try row.decode(column: "generation", as: Int64.self)
        let taken = try row.decode(column: "coins_taken", as: Int64.self)
        let grants = try await db.raw(
            """
            UPDATE entitlement_grants SET revoked_at = NULL
            WHERE transaction_id = \(bind: transactionId) AND revoked_at IS NOT NULL
            RETURNING entitlement, starts_at, ends_at
            """
        ).all()
        for grant in grants {
            try await AuditStore.append(
                AuditEntry(
                    action: "entitlement.reinstated", user: user, subject: try grant.decode(column: "entitlement", as: String.self),
                    periodStart: Date(millis: try grant.decode(column: "starts_at", as: Int64.self)),
                    periodEnd: try grant.decode(column: "ends_at", as: Int64?.self).map(Date.init(millis:)), cause: cause,
                    detail: "\(productId) \(transactionId): Apple reversed the refund", createdAt: now), on: db)
        }
        if taken > 0,
            let currency = try await db.raw(
                "SELECT currency FROM wallet_entries WHERE cause = \(bind: "transaction:\(transactionId)")"
            ).first()?.decode(column: "currency", as: String.self)
        {
            _ = try await WalletStore.apply(
                user: user, currency: currency, amount: taken, cause: "refund_reversed:\(transactionId):\(generation)",
                reason: "\(productId): Apple reversed the refund", allowNegative: true, now: now, on: db)
        }
        try await db.raw(
            """
            UPDATE revocations SET status = 'reinstated', decided_at = \(bind: decidedAt.millis), updated_at = \(bind: now.millis)
            WHERE transaction_id = \(bind: transactionId)
            """
        ).run()
        try await AuditStore.append(
            AuditEntry(
                action: "transaction.reinstated", user: user, subject: transactionId, amount: taken > 0 ? taken : nil,
                cause: cause, detail: "\(productId): Apple reversed the refund", createdAt: now), on: db)
        return true
    }

    // MARK: Consumption requests

    /// Queues Apple's refund question for `transactionId` (once per notification), due within 12 hours.
    public static func queueConsumptionRequest(
        id: String, bundleId: String, environment: String, transactionId: String, originalTransactionId: String?,
        reason: String?, requestedAt: Date, now: Date, on db: any SQLDatabase
    ) async throws {
        let user = try await db.raw(
            "SELECT user_id FROM apple_transactions WHERE transaction_id = \(bind: transactionId)"
        ).first()?.decode(column: "user_id", as: String.self)
        let inserted = try await db.raw(
            """
            INSERT INTO consumption_requests (id, bundle_id, environment, transaction_id, original_transaction_id, user_id,
                reason, requested_at, deadline_at, status, attempts, next_attempt_at, updated_at)
            VALUES (\(bind: id), \(bind: bundleId), \(bind: environment), \(bind: transactionId), \(bind: originalTransactionId),
                \(bind: user), \(bind: reason), \(bind: requestedAt.millis), \(bind: requestedAt.addingTimeInterval(12 * 3600).millis),
                'pending', 0, \(bind: requestedAt.millis), \(bind: now.millis))
            ON CONFLICT (id) DO NOTHING RETURNING id
            """
        ).first()
        if inserted != nil, let user {
            try await AuditStore.append(
                AuditEntry(
                    action: "refund.requested", user: UserID(rawValue: user), subject: transactionId, cause: "notification:\(id)",
                    detail: "the customer asked Apple for a refund (\(reason ?? "no reason given")); answer due in 12 hours",
                    createdAt: now), on: db)
        }
    }

    /// Apple decided the refund: open requests for the transaction need no answer any more.
    public static func closeConsumptionRequests(transactionId: String, decision: String, now: Date, on db: any SQLDatabase)
        async throws
    {
        try await db.raw(
            """
            UPDATE consumption_requests SET status = 'closed', last_error = \(bind: "Apple decided first: \(decision)"),
                updated_at = \(bind: now.millis)
            WHERE transaction_id = \(bind: transactionId) AND status = 'pending'
            """
        ).run()
    }
}

/// A subscription row as a snapshot, and the rule for folding a newer snapshot into it.
struct StoredSubscription {
    var snapshot: SubscriptionSnapshot

    init(snapshot: SubscriptionSnapshot) { self.snapshot = snapshot }

    init(row: any SQLRow) throws {
        snapshot = SubscriptionSnapshot(
            originalTransactionId: try row.decode(column: "original_transaction_id", as: String.self),
            bundleId: try row.decode(column: "bundle_id", as: String.self),
            productId: try row.decode(column: "product_id", as: String.self),
            subscriptionGroup: try row.decode(column: "subscription_group", as: String?.self),
            environment: try row.decode(column: "environment", as: String.self),
            state: SubscriptionState(rawValue: try row.decode(column: "state", as: String.self)),
            expirationReason: try row.decode(column: "expiration_reason", as: String?.self),
            autoRenew: try row.decode(column: "auto_renew", as: Int64?.self).map { $0 != 0 },
            autoRenewProductId: try row.decode(column: "auto_renew_product_id", as: String?.self),
            expiresAt: try row.decode(column: "expires_at", as: Int64?.self).map(Date.init(millis:)),
            gracePeriodExpiresAt: try row.decode(column: "grace_expires_at", as: Int64?.self).map(Date.init(millis:)),
            offerType: try row.decode(column: "offer_type", as: Int64?.self).map(Int.init),
            offerId: try row.decode(column: "offer_id", as: String?.self),
            priceIncrease: try row.decode(column: "price_increase", as: String?.self),
            latestTransactionId: try row.decode(column: "latest_transaction_id", as: String?.self),
            event: try row.decode(column: "last_event", as: String.self),
            signedDate: Date(millis: try row.decode(column: "last_signed_date", as: Int64.self)))
    }

    /// `snapshot` over `existing`: what the snapshot leaves nil keeps its stored value; a grace period end only
    /// while in grace; an expiry reason only while expired or refunded; the offer follows the latest transaction.
    static func merge(_ snapshot: SubscriptionSnapshot, into existing: SubscriptionSnapshot?) -> SubscriptionSnapshot {
        guard let existing else { return snapshot }
        var merged = snapshot
        if merged.state == nil { merged.state = existing.state }
        if merged.state == .expired || merged.state == .refunded {
            merged.expirationReason = snapshot.expirationReason ?? existing.expirationReason
        }
        merged.autoRenew = snapshot.autoRenew ?? existing.autoRenew
        merged.autoRenewProductId = snapshot.autoRenewProductId ?? existing.autoRenewProductId
        merged.expiresAt = snapshot.expiresAt ?? existing.expiresAt
        merged.gracePeriodExpiresAt =
            merged.state == .gracePeriod ? (snapshot.gracePeriodExpiresAt ?? existing.gracePeriodExpiresAt) : nil
        merged.subscriptionGroup = snapshot.subscriptionGroup ?? existing.subscriptionGroup
        merged.latestTransactionId = snapshot.latestTransactionId ?? existing.latestTransactionId
        merged.priceIncrease = snapshot.priceIncrease ?? existing.priceIncrease
        if snapshot.offerType == nil && snapshot.offerId == nil && snapshot.latestTransactionId == nil {
            merged.offerType = existing.offerType
            merged.offerId = existing.offerId
        }
        return merged
    }
}
