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
                let user = try await db.raw("SELECT user_id FROM store_transactions WHERE transaction_id = \(bind: transactionId)").first()?
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
            try await db.raw("SELECT COUNT(*) AS n FROM store_transactions WHERE user_id = \(bind: user) AND price > 0").first()?
                .decode(column: "n", as: Int64.self) ?? 0
        )
        for row in try await db.raw(
            """
            SELECT t.currency, COUNT(*) AS n, CAST(SUM(t.price) AS BIGINT) AS amount FROM revocations r
            JOIN store_transactions t ON t.transaction_id = r.transaction_id
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
                SELECT COUNT(DISTINCT other.user_id) AS n FROM store_transactions mine
                JOIN store_transactions other ON other.app_transaction_id = mine.app_transaction_id
                WHERE mine.user_id = \(bind: user) AND mine.app_transaction_id IS NOT NULL AND other.user_id <> mine.user_id
                """
            ).first()?.decode(column: "n", as: Int64.self) ?? 0
        )
        return signals
    }

    /// How far a review has read: the outbox's last position and the last audit entry, so the next one looks only
    /// at customers something happened to since.
    public struct Watermark: Sendable, Hashable {
        public var event: Int64
        public var audit: Int64
    }

    /// The outbox's and the audit trail's ends now.
    public func watermark() async throws -> Watermark {
        try await provider.withReader { db in
            let event = try await db.raw("SELECT MAX(position) AS n FROM events").first()?.decode(column: "n", as: Int64?.self) ?? 0
            let audit = try await db.raw("SELECT MAX(id) AS n FROM audit_entries").first()?.decode(column: "n", as: Int64?.self) ?? 0
            return Watermark(event: event, audit: audit)
        }
    }

    /// The customers whose signals may have changed after `mark`: every user of an outbox event (deliveries,
    /// refunds, wallet changes, merges) or of a risky audit entry after it, and every user sharing an install with
    /// one of them. Read on a reader connection, by indexed ranges: it never holds up a purchase.
    public func touched(since mark: Watermark, limit: Int = 100_000) async throws -> Set<String> {
        try await provider.withReader { db in
            var users = Set<String>()
            for row in try await db.raw(
                "SELECT DISTINCT user_id FROM events WHERE position > \(bind: mark.event) LIMIT \(bind: limit)"
            ).all() {
                users.insert(try row.decode(column: "user_id", as: String.self))
            }
            for row in try await db.raw(
                "SELECT DISTINCT user_id FROM audit_entries WHERE id > \(bind: mark.audit) AND action IN \(Self.riskyActions)"
            ).all() {
                users.insert(try row.decode(column: "user_id", as: String.self))
            }
            var sharing = Set<String>()
            for user in users {
                for row in try await db.raw(
                    """
                    SELECT DISTINCT other.user_id FROM store_transactions mine
                    JOIN store_transactions other ON other.app_transaction_id = mine.app_transaction_id
                    WHERE mine.user_id = \(bind: user) AND mine.app_transaction_id IS NOT NULL AND other.user_id <> mine.user_id
                    """
                ).all() {
                    sharing.insert(try row.decode(column: "user_id", as: String.self))
                }
            }
            return users.union(sharing)
        }
    }

    /// The signals of each of `users`, on a reader connection.
    public func signals(of users: Set<String>) async throws -> [RiskSignals] {
        try await provider.withReader { db in
            var found: [RiskSignals] = []
            for user in users.sorted() { found.append(try await Self.signals(of: user, on: db)) }
            return found
        }
    }

    /// Customers whose signals pass `policy`, most flags first (at most `limit`). Read on a reader connection.
    public func review(_ policy: RiskPolicy, limit: Int = 200) async throws -> [RiskSignals] {
        try await provider.withReader { db in
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
                SELECT DISTINCT t.user_id FROM store_transactions t WHERE t.app_transaction_id IN (
                    SELECT app_transaction_id FROM store_transactions WHERE app_transaction_id IS NOT NULL
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
