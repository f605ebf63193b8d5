import AppStoreWire
import Foundation
import OpenAPIRuntime
import StorekeeperAPI
import StorekeeperCore
import StorekeeperServerAPI
import StorekeeperStorage

extension APIHandler {
    /// Reconciles each day of `[from, to)` now (at most 31).
    func adminRunReconciliation(_ input: Operations.AdminRunReconciliation.Input) async throws -> Operations.AdminRunReconciliation.Output {
        let body =
            switch input.body {
            case .json(let value): value
            }
        let (from, to) = try Self.range(from: body.from, to: body.to)
        guard to.timeIntervalSince(from) <= 31 * 86_400 else {
            throw StorekeeperError.invalidInput("invalid_range", "reconcile at most 31 days at a time")
        }
        guard let reconciler = jobs.reconciler else {
            throw StorekeeperError(
                .conflict,
                code: "reconciliation_unavailable",
                message: "reconciliation needs App Store Connect: configure reports.vendorNumber and reports.key.*"
            )
        }
        var days: [Components.Schemas.Reconciliation.DaysPayloadPayload] = []
        var findings: [Components.Schemas.ReconciliationFinding] = []
        var day = from
        while day < to {
            let result = try await reconciler.reconcile(day: RevenueReportBuilder.day(day))
            days.append(try Self.schema(result.day))
            findings += try result.findings.map(Self.schema)
            day = day.addingTimeInterval(86_400)
        }
        return .ok(.init(body: .json(.init(days: days, findings: findings))))
    }

    /// Reconciles one month against Apple's financial report now.
    func adminRunMonthReconciliation(
        _ input: Operations.AdminRunMonthReconciliation.Input
    ) async throws -> Operations.AdminRunMonthReconciliation.Output {
        let month = try InputText.check(input.path.month, field: "month", maxBytes: 16)
        guard let reconciler = jobs.reconciler else {
            throw StorekeeperError(
                .conflict,
                code: "reconciliation_unavailable",
                message: "reconciliation needs App Store Connect: configure reports.vendorNumber and reports.key.*"
            )
        }
        let result = try await reconciler.reconcile(month: month)
        return .ok(.init(body: .json(.init(days: [try Self.schema(result.day)], findings: try result.findings.map(Self.schema)))))
    }

    /// Reconciles one UTC month of Google Play sales against Google's earnings reports now.
    func adminRunPlayReconciliation(
        _ input: Operations.AdminRunPlayReconciliation.Input
    ) async throws -> Operations.AdminRunPlayReconciliation.Output {
        let month = try InputText.check(input.path.month, field: "month", maxBytes: 16)
        guard let reconciler = jobs.playReconciler else {
            throw StorekeeperError(
                .conflict,
                code: "reconciliation_unavailable",
                message: "Google Play reconciliation needs an app with googlePlay.reports.bucket (the earnings reports' bucket)"
            )
        }
        let result = try await reconciler.reconcile(month: month)
        return .ok(.init(body: .json(.init(days: [try Self.schema(result.day)], findings: try result.findings.map(Self.schema)))))
    }

    /// The days of `[from, to)` reconciled and their findings, as JSON or CSV.
    func adminGetReconciliation(_ input: Operations.AdminGetReconciliation.Input) async throws -> Operations.AdminGetReconciliation.Output {
        let (from, to) = try Self.range(from: input.query.from, to: input.query.to)
        guard let reconciliations else {
            throw StorekeeperError(.internal, code: "no_reconciliation_store", message: "reconciliation reads are not configured")
        }
        let first = RevenueReportBuilder.day(from)
        let last = RevenueReportBuilder.day(to.addingTimeInterval(-86_400))
        // The fiscal months the days fall in (a fiscal month may start in the previous calendar month).
        let months = ReportCalendar.Day(first).flatMap { firstDay in
            ReportCalendar.Day(last).map {
                (ReportCalendar.fiscalMonth(containing: firstDay).name, ReportCalendar.fiscalMonth(containing: $0).name)
            }
        }
        let kind = input.query.kind.flatMap { Reconciliation.Kind(rawValue: $0.rawValue) }
        let findings = try await reconciliations.findings(from: first, to: last, months: months, kind: kind)
        let wantsCSV = input.headers.accept.sorted { $0.quality.doubleValue > $1.quality.doubleValue }.first?.contentType == .csv
        if wantsCSV {
            return .ok(.init(body: .csv(HTTPBody(Self.csv(findings)))))
        }
        let days = try await reconciliations.days(from: first, to: last, months: months)
        return .ok(.init(body: .json(.init(days: try days.map(Self.schema), findings: try findings.map(Self.schema)))))
    }

    static func schema(_ day: ReconciliationTable.Day) throws -> Components.Schemas.Reconciliation.DaysPayloadPayload {
        .init(
            day: day.day,
            status: try documented(day.status),
            appleUnits: day.appleUnits,
            storekeeperUnits: day.storekeeperUnits,
            appleRefunds: day.appleRefunds,
            storekeeperRefunds: day.storekeeperRefunds,
            findings: day.findings,
            message: day.message,
            ranAt: day.ranAt.millis,
            runs: day.runs
        )
    }

    static func schema(_ finding: Reconciliation.Finding) throws -> Components.Schemas.ReconciliationFinding {
        .init(
            day: finding.key.day,
            kind: try documented(finding.kind.rawValue),
            productId: finding.key.productId,
            storefront: finding.key.storefront,
            currency: finding.key.currency,
            appleUnits: finding.appleUnits,
            storekeeperUnits: finding.storekeeperUnits,
            appleAmount: finding.appleAmount,
            storekeeperAmount: finding.storekeeperAmount,
            transactionIds: finding.transactionIds,
            detail: finding.detail
        )
    }

    /// Findings as CSV with a header row; text fields quoted.
    static func csv(_ findings: [Reconciliation.Finding]) -> String {
        func quoted(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
        var out = "day,kind,product_id,storefront,currency,apple_units,storekeeper_units,apple_amount,storekeeper_amount,transaction_ids,detail\n"
        for f in findings {
            out +=
                [
                    f.key.day, f.kind.rawValue, quoted(f.key.productId), quoted(f.key.storefront), quoted(f.key.currency), String(f.appleUnits),
                    String(f.storekeeperUnits), String(f.appleAmount), String(f.storekeeperAmount),
                    quoted(f.transactionIds.joined(separator: " ")), quoted(f.detail),
                ].joined(separator: ",") + "\n"
        }
        return out
    }
}
