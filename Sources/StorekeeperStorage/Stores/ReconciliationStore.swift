import Foundation
import SQLKit
import StorekeeperCore

/// Reads reconciliations: the days run, their findings, and what the pending-recovery list holds for a line Apple
/// counted and Storekeeper did not deliver.
public struct ReconciliationStore: Sendable {
    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// The days in `[from, to]` (`YYYY-MM-DD`) that were run, the months (`YYYY-MM`) they fall in, and the Google Play
    /// months (`play:YYYY-MM`, calendar months) they fall in, in order.
    public func days(from: String, to: String, months: (first: String, last: String)? = nil) async throws -> [ReconciliationTable.Day] {
        let months = months ?? (String(from.prefix(7)), String(to.prefix(7)))
        return try await provider.withSession { db in
            try await db.raw(
                """
                SELECT day, status, apple_units, storekeeper_units, apple_refunds, storekeeper_refunds, findings, message, ran_at, runs
                FROM reconciliation_days WHERE (day >= \(bind: from) AND day <= \(bind: to))
                    OR (LENGTH(day) = 7 AND day >= \(bind: months.first) AND day <= \(bind: months.last))
                    OR (day >= \(bind: "play:" + from.prefix(7)) AND day <= \(bind: "play:" + to.prefix(7))) ORDER BY day
                """
            ).all().map(ReconciliationTable.day(from:))
        }
    }

    /// The findings of the days in `[from, to]` and of their months, optionally of one kind, by day and line.
    public func findings(
        from: String,
        to: String,
        months: (first: String, last: String)? = nil,
        kind: Reconciliation.Kind? = nil,
        limit: Int = 10_000
    ) async throws
        -> [Reconciliation.Finding]
    {
        let months = months ?? (String(from.prefix(7)), String(to.prefix(7)))
        return try await provider.withSession { db in
            let filter: SQLQueryString = kind.map { " AND kind = \(bind: $0.rawValue)" } ?? ""
            return try await db.raw(
                """
                SELECT day, kind, product_id, storefront, currency, apple_units, storekeeper_units, apple_amount, storekeeper_amount,
                    transactions, detail FROM reconciliation_findings WHERE ((day >= \(bind: from) AND day <= \(bind: to))
                    OR (LENGTH(day) = 7 AND day >= \(bind: months.first) AND day <= \(bind: months.last))
                    OR (day >= \(bind: "play:" + from.prefix(7)) AND day <= \(bind: "play:" + to.prefix(7))))
                """ + filter + " ORDER BY day, product_id, storefront, currency, kind LIMIT \(bind: limit)"
            ).all().map(ReconciliationTable.finding(from:))
        }
    }

    /// The latest day reconciled against Apple, if any.
    public func latestDay() async throws -> String? {
        try await provider.withSession { db in
            // Apple's days only (Google Play's months are named `play:YYYY-MM`).
            try await db.raw("SELECT MAX(day) AS day FROM reconciliation_days WHERE status = 'reconciled' AND day NOT LIKE 'play:%'").first()?
                .decode(column: "day", as: String?.self)
        }
    }

    /// Findings of each kind over the days in `[from, to]`.
    public func counts(from: String, to: String) async throws -> [String: Int] {
        try await provider.withSession { db in
            var counts: [String: Int] = [:]
            for row in try await db.raw(
                "SELECT kind, COUNT(*) AS n FROM reconciliation_findings WHERE day >= \(bind: from) AND day <= \(bind: to) GROUP BY kind"
            ).all() {
                counts[try row.decode(column: "kind", as: String.self)] = Int(try row.decode(column: "n", as: Int64.self))
            }
            return counts
        }
    }

    /// Purchases of `productId` parked in `[from, to)` and still waiting on the pending-recovery list.
    public func parked(productId: String, from: Date, to: Date) async throws -> [String] {
        try await provider.withSession { db in
            // A parked row has no purchase date of its own: it was parked at or after the purchase.
            try await db.raw(
                """
                SELECT transaction_id FROM pending_transactions
                WHERE resolved_at IS NULL AND product_id = \(bind: productId) AND environment = 'Production'
                    AND created_at >= \(bind: from.millis) AND created_at < \(bind: to.millis) ORDER BY created_at LIMIT 50
                """
            ).all().map { try $0.decode(column: "transaction_id", as: String.self) }
        }
    }
}
