import Foundation
import StorekeeperCore
import StorekeeperStorage

/// Refunds, revocations and their reversals, applied in the caller's unit of work with ``RevocationRules`` deciding
/// what a message does whatever order messages arrive in.
enum Revocations {
    /// What taking a transaction back did.
    enum Outcome: Sendable, Hashable {
        /// Taken back now: grants cut from the revocation date, coins taken (and forgiven under the floor policy).
        case revoked(user: UserID, coinsTaken: Int64, coinsForgiven: Int64)
        /// Already taken back by an earlier message: nothing changes.
        case alreadyRevoked
        /// Storekeeper never delivered this transaction: nothing to take back.
        case notDelivered
    }

    /// Takes back what `transactionId` delivered, from `date` on: the grant's remaining time (membership, pass,
    /// unlock) or the coins (the policy decides whether spent coins become a debt or are forgiven).
    static func revoke(
        transactionId: String,
        at date: Date,
        kind revocation: LifecyclePlan.Revocation,
        revocationType: String?,
        revocationPercentage: Int?,
        policy: CoinClawbackPolicy,
        decidedAt: Date,
        cause: AuditCause,
        in uow: UnitOfWork
    ) async throws -> Outcome {
        guard let delivered = try await StoreTransactionsTable.delivered(transactionId, on: uow.db) else { return .notDelivered }
        let record = try await RevocationsTable.find(transactionId, kind: uow.kind, on: uow.db)
        let decided = Date(millis: decidedAt.millis)
        guard case .revoke(let generation) = RevocationRules.revoke(given: record.map(Self.rule), decidedAt: decided) else {
            return .alreadyRevoked
        }
        let user = delivered.user
        // A family revocation takes everything; a refund what Apple refunded (all, or a prorated share).
        let share = revocation == .refund ? RefundShare(revocationType: revocationType, revocationPercentage: revocationPercentage) : .full
        let what =
            revocation != .refund
            ? "Family Sharing access withdrawn"
            : share.isFull ? "refunded by the store" : "refunded by the store (prorated, \(share.description))"
        try await StoreTransactionsTable.recordRevocation(transactionId, type: revocationType, percentage: revocationPercentage, on: uow.db)
        let period = try await EntitlementGrantsTable.period(of: transactionId, on: uow.db)
        let stop = period.map { share.cut(start: $0.start, end: $0.end, at: date) } ?? date
        if let stop {
            for grant in try await EntitlementGrantsTable.revoke(transactionId: transactionId, at: stop, on: uow.db) {
                uow.record(
                    AuditEntry(
                        action: .entitlementRevoked,
                        user: grant.user,
                        subject: grant.entitlement,
                        periodStart: max(grant.start, stop),
                        periodEnd: grant.end,
                        cause: cause,
                        detail: "\(delivered.productId) \(transactionId) \(what); "
                            + (share.isFull ? "service from the revocation date on removed" : "the refunded share of the period removed"),
                        createdAt: uow.now
                    )
                )
            }
        }
        var taken: Int64 = 0
        var forgiven: Int64 = 0
        if delivered.productKind == .consumable, let credited = try await WalletEntriesTable.find(.transaction(transactionId), on: uow.db) {
            let balance = try await WalletsTable.balance(user, currency: credited.currency, lock: true, kind: uow.kind, on: uow.db)
            (taken, forgiven) = policy.clawback(refunded: share.of(credited.amount), balance: balance)
            if taken > 0 {
                _ = try await WalletPostings.post(
                    user: user,
                    currency: credited.currency,
                    amount: -taken,
                    key: .refund(transactionId, generation: generation),
                    reason: "\(delivered.productId) \(what)",
                    allowNegative: true,
                    in: uow
                )
            }
            if forgiven > 0 {
                uow.record(
                    AuditEntry(
                        action: .walletClawbackForgiven,
                        user: user,
                        subject: credited.currency,
                        amount: forgiven,
                        cause: cause,
                        detail: "\(forgiven) refunded \(credited.currency) were already spent; forgiven under the floor policy",
                        createdAt: uow.now
                    )
                )
            }
        }
        try await RevocationsTable.insert(
            .init(
                transactionId: transactionId,
                user: user,
                original: delivered.original,
                productId: delivered.productId,
                productKind: delivered.productKind.rawValue,
                kind: revocation.rawValue,
                status: "revoked",
                at: date,
                generation: generation,
                coinsTaken: taken,
                coinsForgiven: forgiven,
                decidedAt: decidedAt
            ),
            replace: true,
            now: uow.now,
            on: uow.db
        )
        uow.record(
            AuditEntry(
                action: revocation == .refund ? .transactionRefunded : .transactionRevoked,
                user: user,
                subject: transactionId,
                amount: taken > 0 ? -taken : nil,
                periodStart: date,
                cause: cause,
                detail: "\(delivered.productId) \(what)" + (forgiven > 0 ? "; \(forgiven) coins forgiven" : ""),
                createdAt: uow.now
            )
        )
        var details = [
            "transactionId": transactionId, "productId": delivered.productId, "kind": revocation.rawValue,
            "revokedAt": String(date.millis), "originalTransactionId": delivered.original,
        ]
        if taken > 0 { details["coinsTaken"] = String(taken) }
        if forgiven > 0 { details["coinsForgiven"] = String(forgiven) }
        if let revocationType { details["revocationType"] = revocationType }
        if !share.isFull { details["refundedShare"] = String(share.milliPercent) }
        details["environment"] = delivered.environment
        if revocation == .refund, let price = delivered.price, let currency = delivered.currency {
            // What Apple gave back: all of the price, or its prorated share (milliunits of a percent, 100000 = all).
            details["refundedAmount"] = String(share.of(price))
            details["currency"] = currency
        }
        uow.emit(LedgerEvent(type: .refunded, user: user, subject: transactionId, occurredAt: uow.now, details: details))
        return .revoked(user: user, coinsTaken: taken, coinsForgiven: forgiven)
    }

    /// Restores what a refund took back (`REFUND_REVERSED`): the grants stand again and the coins taken are
    /// credited back. A reversal arriving before its refund is remembered, so the late refund changes nothing.
    @discardableResult
    static func reinstate(transactionId: String, decidedAt: Date, cause: AuditCause, in uow: UnitOfWork) async throws -> Bool {
        let record = try await RevocationsTable.find(transactionId, kind: uow.kind, on: uow.db)
        switch RevocationRules.reinstate(given: record.map(Self.rule), decidedAt: Date(millis: decidedAt.millis)) {
        case .unchanged:
            return false
        case .rememberEarly:
            if let delivered = try await StoreTransactionsTable.delivered(transactionId, on: uow.db) {
                try await RevocationsTable.insert(
                    .init(
                        transactionId: transactionId,
                        user: delivered.user,
                        original: delivered.original,
                        productId: delivered.productId,
                        productKind: delivered.productKind.rawValue,
                        kind: "refund",
                        status: "reinstated",
                        at: decidedAt,
                        generation: 0,
                        coinsTaken: 0,
                        coinsForgiven: 0,
                        decidedAt: decidedAt
                    ),
                    replace: false,
                    now: uow.now,
                    on: uow.db
                )
            }
            return false
        case .reinstate:
            break
        }
        guard let record else { return false }
        let user = record.user
        for grant in try await EntitlementGrantsTable.reinstate(transactionId: transactionId, on: uow.db) {
            uow.record(
                AuditEntry(
                    action: .entitlementReinstated,
                    user: grant.user,
                    subject: grant.entitlement,
                    periodStart: grant.start,
                    periodEnd: grant.end,
                    cause: cause,
                    detail: "\(record.productId) \(transactionId): Apple reversed the refund",
                    createdAt: uow.now
                )
            )
        }
        if record.coinsTaken > 0, let credited = try await WalletEntriesTable.find(.transaction(transactionId), on: uow.db) {
            _ = try await WalletPostings.post(
                user: user,
                currency: credited.currency,
                amount: record.coinsTaken,
                key: .refundReversed(transactionId, generation: record.generation),
                reason: "\(record.productId): Apple reversed the refund",
                allowNegative: true,
                in: uow
            )
        }
        try await RevocationsTable.markReinstated(transactionId, decidedAt: decidedAt, now: uow.now, on: uow.db)
        uow.record(
            AuditEntry(
                action: .transactionReinstated,
                user: user,
                subject: transactionId,
                amount: record.coinsTaken > 0 ? record.coinsTaken : nil,
                cause: cause,
                detail: "\(record.productId): Apple reversed the refund",
                createdAt: uow.now
            )
        )
        uow.emit(
            LedgerEvent(
                type: .reinstated,
                user: user,
                subject: transactionId,
                occurredAt: uow.now,
                details: ["transactionId": transactionId, "productId": record.productId, "coinsRestored": String(record.coinsTaken)]
            )
        )
        return true
    }

    private static func rule(_ row: RevocationsTable.Row) -> RevocationRules.Record {
        RevocationRules.Record(status: row.status, decidedAt: Date(millis: row.decidedAt), generation: row.generation)
    }
}
