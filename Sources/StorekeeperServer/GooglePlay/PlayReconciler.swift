import AppStoreWire
import Foundation
import GooglePlayWire
import Logging
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// Reconciles Google Play sales against Google's monthly earnings reports, order by order (the report names each
/// order, so a finding names the order rather than a count that could cancel out): an order Google charged that
/// Storekeeper never delivered (`google_only`), one Storekeeper delivered that Google never charged
/// (`unknown_to_google`), prices and proceeds that differ, refunds Google gave that Storekeeper never took back and
/// refunds Storekeeper took that Google does not show. A month is recorded as `play:YYYY-MM` beside Apple's days and
/// months; months are UTC months, as Google's financial data. Every app with `googlePlay.reports.bucket` is covered;
/// apps sharing a bucket (one developer account) read it once.
public struct PlayReconciler: PeriodicJob {
    let apps: AppRegistry
    let sales: PlaySalesStore
    let ledger: Ledger
    let lease: JobLease
    let metrics: ServerMetrics
    let logger: Logger

    /// Orders bought this close to a month's end may be booked by Google in the next month's report: they are
    /// checked when this month's report has them, and otherwise left to the next month's run (whose window reaches
    /// back this far).
    static let boundary: TimeInterval = 3_600

    /// The record's name for `month`.
    public static func period(_ month: String) -> String { "play:\(month)" }

    /// Reconciles the two months before `now`'s (Google publishes a month's report in the first days of the next;
    /// the one before catches a late report); returns how many months were reconciled.
    @discardableResult
    public func runOnce(now: Date = Date()) async throws -> Int {
        let (acquired, _) = try await lease.acquire("play-reconciliation", for: .seconds(1_800), now: now)
        guard acquired else { return 0 }
        do {
            var reconciled = 0
            let current = Self.month(of: now)
            for back in [2, 1] {
                guard let month = Self.month(current, adding: -back) else { continue }
                if try await reconcile(month: month).day.status == "reconciled" { reconciled += 1 }
            }
            try await lease.release("play-reconciliation", cursor: nil)
            metrics.jobRun("play_reconciliation", items: reconciled)
            return reconciled
        } catch {
            try? await lease.release("play-reconciliation", cursor: nil)
            throw error
        }
    }

    /// One order in Google's books: what was charged, refunded, and kept by Google (fees and taxes, net of refunds).
    struct GoogleOrder {
        var sku = ""
        var packageName = ""
        var country = ""
        var currency = ""
        var date = ""
        var charged: Int64 = 0
        var refunded: Int64 = 0
        var withheld: Int64 = 0
        var refundDate = ""
        /// Whether Google charged it within the developer's first US$1 million of the year (its 15 % tier).
        var firstMillion: Bool?

        mutating func add(_ row: PlayEarningsReport.Row) {
            if sku.isEmpty {
                (sku, packageName, country, currency) = (row.sku, row.packageName, row.buyerCountry, row.buyerCurrency)
            }
            func sum(_ a: inout Int64, _ b: Int64) { a = Reconciliation.Tally.saturating(a, b) }
            switch row.type {
            case .charge:
                sum(&charged, row.buyerAmount)
                if date.isEmpty { date = row.date }
                if firstMillion == nil { firstMillion = row.firstMillionEligible }
            case .chargeRefund:
                sum(&refunded, -row.buyerAmount)
                refundDate = row.date
            case .googleFee, .tax, .googleFeeRefund, .taxRefund:
                sum(&withheld, row.buyerAmount)
            case .other:
                break
            }
        }

        static func orders(_ rows: [PlayEarningsReport.Row]) -> [String: GoogleOrder] {
            rows.reduce(into: [:]) { orders, row in orders[row.orderId, default: GoogleOrder()].add(row) }
        }
    }

    /// Reconciles one UTC month (`YYYY-MM`). A report not published yet, or one that cannot be read, is recorded and
    /// answered, not thrown: an earlier reconciliation of the month stands, and the next run tries again.
    public func reconcile(month: String) async throws -> Reconciler.DayResult {
        guard let (start, end) = Self.interval(month), let previousMonth = Self.month(month, adding: -1) else {
            throw StorekeeperError.invalidInput("invalid_month", "months are YYYY-MM")
        }
        let period = Self.period(month)
        let reporting = apps.apps.compactMap(\.googlePlay).filter { $0.reports != nil }
        let packages = Set(reporting.map(\.configuration.packageName))
        var clients: [String: PlayReportsClient] = [:]
        for play in reporting { if let reports = play.reports, clients[reports.bucket] == nil { clients[reports.bucket] = reports } }
        var rows: [PlayEarningsReport.Row] = []
        var earlierRows: [PlayEarningsReport.Row] = []
        var notes: [String] = []
        var missing: [String] = []
        for (bucket, client) in clients.sorted(by: { $0.key < $1.key }) {
            let started = DispatchTime.now().uptimeNanoseconds
            do {
                guard let report = try await client.earningsReport(month: month) else {
                    metrics.googleCall(endpoint: "earnings", outcome: "not_available", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
                    missing.append(bucket)
                    continue
                }
                metrics.googleCall(endpoint: "earnings", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
                rows += report.rows
            } catch {
                metrics.googleCall(endpoint: "earnings", outcome: "error", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
                logger.notice("Play month not reconciled", metadata: ["month": "\(month)", "bucket": "\(bucket)", "error": "\(error)"])
                return try await record(ReconciliationTable.Day(day: period, status: "failed", message: "\(bucket): \(error)", ranAt: Date()))
            }
            // The month before: refunds and orders Google booked across the boundary.
            do {
                earlierRows += try await client.earningsReport(month: previousMonth)?.rows ?? []
            } catch {
                notes.append("\(previousMonth)'s report could not be read (\(error)): orders at the boundary may show as findings")
            }
        }
        guard !clients.isEmpty, missing.count < clients.count else {
            let why =
                clients.isEmpty
                ? "no app has googlePlay.reports.bucket" : "Google has not published the earnings report for \(month) yet"
            return try await record(ReconciliationTable.Day(day: period, status: "not_available", message: why, ranAt: Date()))
        }
        if !missing.isEmpty { notes.append("no earnings report for \(month) in \(missing.joined(separator: ", ")) yet") }
        let foreign = rows.filter { !packages.contains($0.packageName) }.count
        if foreign > 0 { notes.append("\(foreign) lines of other apps of the developer account left out") }
        let google = GoogleOrder.orders(rows.filter { packages.contains($0.packageName) })
        let earlier = GoogleOrder.orders(earlierRows.filter { packages.contains($0.packageName) })

        // Storekeeper's side: the month and a day either side (orders Google booked across the boundary), and any
        // older order Google refunded or charged this month.
        var ours: [String: PlaySalesStore.Sale] = [:]
        for sale in try await sales.sales(from: start.addingTimeInterval(-86_400), to: end.addingTimeInterval(86_400)) {
            ours[sale.transaction.transactionId] = sale
        }
        for sale in try await sales.sales(ids: google.keys.filter { ours[$0] == nil }.sorted()) { ours[sale.transaction.transactionId] = sale }

        var findings: [Reconciliation.Finding] = []
        func key(_ sku: String, _ country: String, _ currency: String) -> Reconciliation.Key {
            let storefront = country.isEmpty ? "" : StorefrontCountry.alpha3(country) ?? "?\(country)"
            return Reconciliation.Key(day: period, productId: sku, storefront: storefront, currency: currency)
        }
        func finding(
            _ kind: Reconciliation.Kind,
            _ key: Reconciliation.Key,
            google: (units: Int64, amount: Int64),
            ours: (units: Int64, amount: Int64),
            _ id: String,
            _ detail: String
        ) {
            findings.append(
                Reconciliation.Finding(
                    kind: kind,
                    key: key,
                    appleUnits: google.units,
                    storekeeperUnits: ours.units,
                    appleAmount: google.amount,
                    storekeeperAmount: ours.amount,
                    transactionIds: [id],
                    detail: detail
                )
            )
        }
        var charged = 0
        var refundedOrders = 0
        for (orderId, order) in google.sorted(by: { $0.key < $1.key }) {
            let line = key(order.sku, order.country, order.currency)
            if order.charged > 0 {
                charged += 1
                guard let sale = ours[orderId], !sale.transaction.sandbox else {
                    let flagged = ours[orderId] != nil ? " (Storekeeper holds it as a test purchase)" : ""
                    finding(
                        .googleOnly,
                        line,
                        google: (1, order.charged),
                        ours: (0, 0),
                        orderId,
                        "Google charged order \(orderId) (\(order.sku)) on \(order.date) and Storekeeper never delivered it\(flagged): a lost "
                            + "order. orders.get names its purchase token; POST /v1/purchases with it delivers it once."
                    )
                    continue
                }
                let commerce = sale.transaction.commerce
                guard let price = commerce.price, commerce.currency == order.currency else {
                    finding(
                        .priceMismatch,
                        line,
                        google: (1, order.charged),
                        ours: (1, commerce.price ?? 0),
                        orderId,
                        "Storekeeper holds \(commerce.price.map(String.init) ?? "no price") \(commerce.currency ?? "") for order \(orderId); "
                            + "Google charged \(order.charged) \(order.currency)"
                    )
                    continue
                }
                if price != order.charged {
                    finding(
                        .priceMismatch,
                        line,
                        google: (1, order.charged),
                        ours: (1, price),
                        orderId,
                        "order \(orderId): Google charged \(order.charged), Storekeeper counts \(price) (milliunits of \(order.currency))"
                    )
                } else if let estimate = Proceeds.estimate(
                    price: price,
                    currency: commerce.currency,
                    storefront: nil,
                    sandbox: false,
                    kind: sale.transaction.kind,
                    purchaseDate: sale.transaction.purchaseDate,
                    store: .googlePlay,
                    storeFeePermille: commerce.storeFeePermille
                ), order.refunded == 0 {
                    let proceeds = Reconciliation.Tally.saturating(order.charged, order.withheld)
                    if (proceeds - estimate.proceeds).magnitude > Reconciliation.proceedsTolerancePerUnit.magnitude {
                        finding(
                            .proceedsMismatch,
                            line,
                            google: (1, proceeds),
                            ours: (1, estimate.proceeds),
                            orderId,
                            "order \(orderId): Google paid \(proceeds) after its fee and taxes; Storekeeper estimates \(estimate.proceeds) "
                                + "(\(estimate.commissionPermille / 10) %)"
                                + (order.firstMillion == false
                                    ? ": Google's 30 % tier, past the developer's first US$1 million this year, which the estimate does not track"
                                    : "")
                        )
                    }
                }
            }
            if order.refunded > 0 {
                refundedOrders += 1
                guard let sale = ours[orderId] else {
                    if order.charged == 0 { notes.append("Google refunded order \(orderId), which Storekeeper never delivered") }
                    continue
                }
                if sale.refundedAt == nil {
                    let partial = order.refunded < (order.charged > 0 ? order.charged : (earlier[orderId]?.charged ?? order.refunded))
                    finding(
                        .refundNotClawedBack,
                        line,
                        google: (1, order.refunded),
                        ours: (0, 0),
                        orderId,
                        "Google refunded \(order.refunded) of order \(orderId) on \(order.refundDate) and Storekeeper still counts it "
                            + (partial
                                ? "(a partial refund: Storekeeper takes back only what a voided purchase names)"
                                : "(no voided purchase reached it: a refund without revoke leaves the purchase with the user)")
                    )
                }
            }
        }

        var delivered = 0
        var atBoundary = 0
        var withoutOrder = 0
        for sale in ours.values.sorted(by: { $0.transaction.transactionId < $1.transaction.transactionId }) {
            let transaction = sale.transaction
            guard !transaction.sandbox, transaction.purchaseDate >= start, transaction.purchaseDate < end,
                (transaction.commerce.price ?? 0) > 0, transaction.commerce.offerDiscountType != "FREE_TRIAL"
            else { continue }
            guard !transaction.transactionId.hasPrefix("token:") else {
                withoutOrder += 1
                continue
            }
            delivered += 1
            let id = transaction.transactionId
            if (google[id]?.charged ?? 0) > 0 || (earlier[id]?.charged ?? 0) > 0 { continue }
            if transaction.purchaseDate >= end.addingTimeInterval(-Self.boundary) {
                atBoundary += 1
                continue
            }
            finding(
                .unknownToGoogle,
                key("\(transaction.productId)", "", transaction.commerce.currency ?? ""),
                google: (0, 0),
                ours: (1, transaction.commerce.price ?? 0),
                id,
                "Storekeeper delivered order \(id) (\(transaction.productId), \(sale.packageName)) and Google's earnings report never "
                    + "charged it: a test purchase taken for production, a forged or replayed purchase, or a plan change paid by unused time"
            )
        }
        var ourRefunds = 0
        for sale in try await sales.refunds(from: start, to: end.addingTimeInterval(-Self.boundary)) {
            ourRefunds += 1
            let id = sale.transaction.transactionId
            if (google[id]?.refunded ?? 0) > 0 || (earlier[id]?.refunded ?? 0) > 0 || id.hasPrefix("token:") { continue }
            finding(
                .refundNotReported,
                key(sale.transaction.productId, "", sale.transaction.commerce.currency ?? ""),
                google: (0, 0),
                ours: (1, sale.transaction.commerce.price ?? 0),
                id,
                "Storekeeper took back order \(id) as refunded and Google's earnings reports show no refund of it"
            )
        }
        findings = Self.merged(findings)
        if atBoundary > 0 { notes.append("\(atBoundary) orders of the month's last hour are left to \(month)'s next report or the next month's") }
        if withoutOrder > 0 { notes.append("\(withoutOrder) purchases without a Google order id cannot be matched") }
        let day = ReconciliationTable.Day(
            day: period,
            status: "reconciled",
            appleUnits: Int64(charged),
            storekeeperUnits: Int64(delivered),
            appleRefunds: Int64(refundedOrders),
            storekeeperRefunds: Int64(ourRefunds),
            findings: findings.count,
            message: notes.isEmpty ? nil : notes.joined(separator: "; "),
            ranAt: Date()
        )
        if !findings.isEmpty {
            logger.warning(
                "Play reconciliation found differences",
                metadata: ["month": "\(month)", "findings": "\(findings.count)", "kinds": "\(Set(findings.map(\.kind.rawValue)).sorted())"]
            )
        }
        try await ledger.recordReconciliation(day, findings: findings)
        metrics.reconciliation(status: "reconciled")
        return Reconciler.DayResult(day: day, findings: findings)
    }

    /// One finding per kind and line, as findings are stored: the orders' units and amounts summed, their ids listed
    /// (the first ``Reconciliation/Tally/sampleLimit``), their details joined.
    static func merged(_ findings: [Reconciliation.Finding]) -> [Reconciliation.Finding] {
        var order: [String] = []
        var byLine: [String: Reconciliation.Finding] = [:]
        var counts: [String: Int] = [:]
        for finding in findings {
            let line = "\(finding.kind.rawValue)|\(finding.key.productId)|\(finding.key.storefront)|\(finding.key.currency)"
            counts[line, default: 0] += 1
            guard var merged = byLine[line] else {
                order.append(line)
                byLine[line] = finding
                continue
            }
            merged.appleUnits = Reconciliation.Tally.saturating(merged.appleUnits, finding.appleUnits)
            merged.storekeeperUnits = Reconciliation.Tally.saturating(merged.storekeeperUnits, finding.storekeeperUnits)
            merged.appleAmount = Reconciliation.Tally.saturating(merged.appleAmount, finding.appleAmount)
            merged.storekeeperAmount = Reconciliation.Tally.saturating(merged.storekeeperAmount, finding.storekeeperAmount)
            if merged.transactionIds.count < Reconciliation.Tally.sampleLimit { merged.transactionIds += finding.transactionIds }
            if merged.detail.utf8.count < 4_000 { merged.detail += "; " + finding.detail }
            byLine[line] = merged
        }
        return order.compactMap { line in
            guard var finding = byLine[line] else { return nil }
            if let count = counts[line], count > 1 { finding.detail = "\(count) orders: " + finding.detail }
            return finding
        }
    }

    private func record(_ day: ReconciliationTable.Day) async throws -> Reconciler.DayResult {
        try await ledger.recordReconciliation(day, findings: [])
        metrics.reconciliation(status: day.status)
        return Reconciler.DayResult(day: day, findings: [])
    }

    // MARK: Months

    private static var utc: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        return calendar
    }

    /// `YYYY-MM` of `date` (UTC).
    static func month(of date: Date) -> String {
        let parts = utc.dateComponents([.year, .month], from: date)
        return String(format: "%04d-%02d", parts.year ?? 2000, parts.month ?? 1)
    }

    /// `month` moved by `months`; nil when `month` is not `YYYY-MM`.
    static func month(_ month: String, adding months: Int) -> String? {
        guard let (start, _) = interval(month), let moved = utc.date(byAdding: .month, value: months, to: start) else { return nil }
        return self.month(of: moved)
    }

    /// The UTC month `[start, end)` `YYYY-MM` names.
    static func interval(_ month: String) -> (Date, Date)? {
        let parts = month.split(separator: "-", omittingEmptySubsequences: false)
        guard month.utf8.count == 7, parts.count == 2, let year = Int(parts[0]), let number = Int(parts[1]), (2000...9999).contains(year),
            (1...12).contains(number), let start = utc.date(from: DateComponents(year: year, month: number, day: 1)),
            let end = utc.date(byAdding: .month, value: 1, to: start)
        else { return nil }
        return (start, end)
    }
}
