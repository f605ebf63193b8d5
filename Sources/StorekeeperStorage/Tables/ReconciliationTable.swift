import Foundation
import SQLKit
import StorekeeperCore

/// `reconciliation_days` and `reconciliation_findings`: the last reconciliation of each UTC day against Apple's
/// sales report. A day reconciled again replaces its findings, so runs are idempotent.
public enum ReconciliationTable {
    /// How a day's reconciliation ended.
    public struct Day: Sendable, Hashable {
        /// `reconciled`, `not_available` (Apple's report is not there yet), or `failed`.
        public var day: String
        public var status: String
        public var appleUnits: Int64
        public var storekeeperUnits: Int64
        public var appleRefunds: Int64
        public var storekeeperRefunds: Int64
        public var findings: Int
        public var message: String?
        public var ranAt: Date
        public var runs: Int

        public init(
            day: String,
            status: String,
            appleUnits: Int64 = 0,
            storekeeperUnits: Int64 = 0,
            appleRefunds: Int64 = 0,
            storekeeperRefunds: Int64 = 0,
            findings: Int = 0,
            message: String? = nil,
            ranAt: Date,
            runs: Int = 1
        ) {
            self.day = day
            self.status = status
            self.appleUnits = appleUnits
            self.storekeeperUnits = storekeeperUnits
            self.appleRefunds = appleRefunds
            self.storekeeperRefunds = storekeeperRefunds
            self.findings = findings
            self.message = message
            self.ranAt = ranAt
            self.runs = runs
        }
    }

    /// Records a run of `day`. A reconciled day replaces the day's findings with `findings`; a day whose report was
    /// not available (or whose run failed) keeps an earlier reconciliation and its findings.
    public static func record(_ day: Day, findings: [Reconciliation.Finding], now: Date, on db: any SQLDatabase) async throws {
        let reconciled = day.status == "reconciled"
        var insert = BulkInsert(
            into: "reconciliation_days",
            columns: [
                "day", "status", "apple_units", "storekeeper_units", "apple_refunds", "storekeeper_refunds", "findings", "message", "ran_at",
                "runs",
            ],
            suffix: """
                ON CONFLICT (day) DO UPDATE SET status = excluded.status, apple_units = excluded.apple_units,
                    storekeeper_units = excluded.storekeeper_units, apple_refunds = excluded.apple_refunds,
                    storekeeper_refunds = excluded.storekeeper_refunds, findings = excluded.findings, message = excluded.message,
                    ran_at = excluded.ran_at, runs = reconciliation_days.runs + 1
                """ + (reconciled ? "" : " WHERE reconciliation_days.status <> 'reconciled'")
        )
        insert.values([
            day.day, day.status, day.appleUnits, day.storekeeperUnits, day.appleRefunds, day.storekeeperRefunds, day.findings, day.message,
            now.millis, 1,
        ])
        try await insert.run(on: db)
        guard reconciled else { return }
        try await db.raw("DELETE FROM reconciliation_findings WHERE day = \(bind: day.day)").run()
        // A few hundred rows per statement keeps every database under its bind-parameter limit.
        for start in stride(from: 0, to: findings.count, by: 500) {
            var rows = BulkInsert(
                into: "reconciliation_findings",
                columns: [
                    "day", "kind", "product_id", "storefront", "currency", "apple_units", "storekeeper_units", "apple_amount",
                    "storekeeper_amount", "transactions", "detail", "found_at",
                ]
            )
            for finding in findings[start..<min(start + 500, findings.count)] {
                rows.values([
                    finding.key.day, finding.kind.rawValue, finding.key.productId, finding.key.storefront, finding.key.currency,
                    finding.appleUnits, finding.storekeeperUnits, finding.appleAmount, finding.storekeeperAmount,
                    finding.transactionIds.joined(separator: " "), finding.detail, now.millis,
                ])
            }
            try await rows.run(on: db)
        }
    }

    static func day(from row: any SQLRow) throws -> Day {
        Day(
            day: try row.decode(column: "day", as: String.self),
            status: try row.decode(column: "status", as: String.self),
            appleUnits: try row.decode(column: "apple_units", as: Int64.self),
            storekeeperUnits: try row.decode(column: "storekeeper_units", as: Int64.self),
            appleRefunds: try row.decode(column: "apple_refunds", as: Int64.self),
            storekeeperRefunds: try row.decode(column: "storekeeper_refunds", as: Int64.self),
            findings: Int(try row.decode(column: "findings", as: Int64.self)),
            message: try row.decode(column: "message", as: String?.self),
            ranAt: Date(millis: try row.decode(column: "ran_at", as: Int64.self)),
            runs: Int(try row.decode(column: "runs", as: Int64.self))
        )
    }

    static func finding(from row: any SQLRow) throws -> Reconciliation.Finding {
        let transactions = try row.decode(column: "transactions", as: String.self)
        return Reconciliation.Finding(
            kind: Reconciliation.Kind(rawValue: try row.decode(column: "kind", as: String.self)) ?? .appleOnly,
            key: Reconciliation.Key(
                day: try row.decode(column: "day", as: String.self),
                productId: try row.decode(column: "product_id", as: String.self),
                storefront: try row.decode(column: "storefront", as: String.self),
                currency: try row.decode(column: "currency", as: String.self)
            ),
            appleUnits: try row.decode(column: "apple_units", as: Int64.self),
            storekeeperUnits: try row.decode(column: "storekeeper_units", as: Int64.self),
            appleAmount: try row.decode(column: "apple_amount", as: Int64.self),
            storekeeperAmount: try row.decode(column: "storekeeper_amount", as: Int64.self),
            transactionIds: transactions.split(separator: " ").map(String.init),
            detail: try row.decode(column: "detail", as: String.self)
        )
    }
}
