import Foundation
import SQLKit
import StorekeeperCore

/// Reads the risk signals of customers (``RiskSignals``) from what the ledger recorded, and the customers whose
/// signals pass a ``RiskPolicy``. Every query is by an indexed column.
public struct RiskStore: Sendable {
    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    static let riskyActions: SQLQueryString = "('risk.introductory_offer_repeated', 'transaction.claim_refused')"

    /// The signals of `user`.
    public func signals(of user: String) async throws -> RiskSignals {
        try await provider.withSession { db in try await Self.signals(of: user, on: db) }
    }

    /// The signals of the owner of `transactionId`, or nil when nobody owns it.
    public func signals(ofTransaction transactionId: String) async throws -> RiskSignals? {
        try await provider.withSession { db in
            guard
                let user = try await db.raw("SELECT user_id FROM apple_transactions WHERE transaction_id = \(bind: transactionId)").first()?
                    .decode(column: "user_id", as: String.self)
            else { return nil }
            return try await Self.signals(of: user, on: db)
        }
    }

    static func signals(of user: String, on db: any SQLDatabase) async throws -> RiskSignals {
        var signals = RiskSignals(user: user)
        for row in try await db.raw(
            """
            SELECT action, COUNT(*) AS n FROM audit_entries WHERE user_id = \(bind: user) AND action IN \(riskyActions) GROUP BY action
            """
        ).all() {
            let count = Int(try row.decode(column: "n", as: Int64.self))
            switch try row.decode(column: "action", as: String.self) {
            case AuditAction.riskIntroductoryOfferRepeated.rawValue: signals.introductoryOfferRepeats = count
            default: signals.replaysRefused = count
            }
        }
        signals.paidPurchases = Int(
            try await db.raw("SELECT COUNT(*) AS n FROM apple_transactions WHERE user_id = \(bind: user) AND price > 0").first()?
                .decode(column: "n", as: Int64.self) ?? 0
        )
        for row in try await db.raw(
            """
            SELECT t.currency, COUNT(*) AS n, CAST(SUM(t.price) AS BIGINT) AS amount FROM revocations r
            JOIN apple_transactions t ON t.transaction_id = r.transaction_id
            WHERE r.user_id = \(bind: user) AND r.kind = 'refund' AND r.status = 'revoked' GROUP BY t.currency
            """
        ).all() {
            signals.refunds += Int(try row.decode(column: "n", as: Int64.self))
            if let currency = try row.decode(column: "currency", as: String?.self) {
                signals.refundedAmount[currency] = try row.decode(column: "amount", as: Int64?.self) ?? 0
            }
        }
        signals.coinsForgiven =
            try await db.raw("SELECT CAST(SUM(coins_forgiven) AS BIGINT) AS n FROM revocations WHERE user_id = \(bind: user)").first()?
            .decode(column: "n", as: Int64?.self) ?? 0
        signals.debt =
            -(try await db.raw("SELECT CAST(SUM(balance) AS BIGINT) AS n FROM wallets WHERE user_id = \(bind: user) AND balance < 0").first()?
            .decode(column: "n", as: Int64?.self) ?? 0)
        signals.mergedGuests = Int(
            try await db.raw("SELECT COUNT(*) AS n FROM users WHERE merged_into = \(bind: user) AND kind = 'guest'").first()?
                .decode(column: "n", as: Int64.self) ?? 0
        )
        signals.sharedInstallUsers = Int(
            try await db.raw(
                """
                SELECT COUNT(DISTINCT other.user_id) AS n FROM apple_transactions mine
                JOIN apple_transactions other ON other.app_transaction_id = mine.app_transaction_id
                WHERE mine.user_id = \(bind: user) AND mine.app_transaction_id IS NOT NULL AND other.user_id <> mine.user_id
                """
            ).first()?.decode(column: "n", as: Int64.self) ?? 0
        )
        return signals
    }

    /// Customers whose signals pass `policy`, most flags first (at most `limit`).
    public func review(_ policy: RiskPolicy, limit: Int = 200) async throws -> [RiskSignals] {
        try await provider.withSession { db in
            var candidates = Set<String>()
            func collect(_ query: SQLQueryString) async throws {
                for row in try await db.raw(query).all() where candidates.count < limit * 4 {
                    candidates.insert(try row.decode(column: "user_id", as: String.self))
                }
            }
            try await collect("SELECT DISTINCT user_id FROM audit_entries WHERE action IN \(Self.riskyActions)")
            try await collect(
                """
                SELECT user_id FROM revocations WHERE kind = 'refund' AND status = 'revoked' GROUP BY user_id
                HAVING COUNT(*) >= \(bind: policy.refundsToReview)
                """
            )
            try await collect("SELECT DISTINCT user_id FROM revocations WHERE coins_forgiven > 0")
            try await collect("SELECT DISTINCT user_id FROM wallets WHERE balance < 0")
            try await collect(
                """
                SELECT merged_into AS user_id FROM users WHERE merged_into IS NOT NULL AND kind = 'guest' GROUP BY merged_into
                HAVING COUNT(*) >= \(bind: policy.mergedGuestsToReview)
                """
            )
            try await collect(
                """
                SELECT DISTINCT t.user_id FROM apple_transactions t WHERE t.app_transaction_id IN (
                    SELECT app_transaction_id FROM apple_transactions WHERE app_transaction_id IS NOT NULL
                    GROUP BY app_transaction_id HAVING COUNT(DISTINCT user_id) > 1)
                """
            )
            var flagged: [RiskSignals] = []
            for user in candidates.sorted() {
                let signals = try await Self.signals(of: user, on: db)
                if !signals.flags(policy).isEmpty { flagged.append(signals) }
            }
            return Array(
                flagged.sorted { ($0.flags(policy).count, $0.refunds, $0.user) > ($1.flags(policy).count, $1.refunds, $1.user) }.prefix(limit)
            )
        }
    }
}
