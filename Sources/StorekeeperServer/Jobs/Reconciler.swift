import AppStoreWire
import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore
import StorekeeperLedger
import StorekeeperStorage

/// Reconciles days against Apple's books (seeds 000 and 004: T+1 / T+2): downloads the day's Summary Sales Report,
/// tallies Storekeeper's own deliveries and refunds for the same day, and stores what disagrees (``Reconciliation``).
/// Findings name what support can act on: a line Apple counted and Storekeeper never delivered (with what the
/// pending-recovery list holds for it), transactions Storekeeper delivered that Apple says it does not know (asked
/// one by one through the App Store Server API), refunds never taken back.
///
/// The daily job reconciles the last few days every run (idempotent: a day's findings are replaced), under a lease so
/// one process does it.
public struct Reconciler: PeriodicJob {
    let client: AppStoreConnectReportsClient
    /// Analytics Reports (nil: `reports.analyticsReports` is off).
    let analytics: AnalyticsReportsClient?
    let configuration: ReportsConfiguration
    let apps: AppRegistry
    let catalog: CatalogService
    let revenue: RevenueStore
    let store: ReconciliationStore
    let ledger: Ledger
    let lease: JobLease
    let smallBusiness: SmallBusinessProgram
    let metrics: ServerMetrics
    let logger: Logger

    /// How one day's run ended.
    public struct DayResult: Sendable {
        public var day: ReconciliationTable.Day
        public var findings: [Reconciliation.Finding]
    }

    /// The most transactions of a line asked about one by one.
    static let confirmLimit = 20

    /// Reconciles the last ``ReportsConfiguration/lookbackDays`` days before `now`'s (days as Apple's reports cut
    /// them); returns how many were reconciled.
    @discardableResult
    public func runOnce(now: Date = Date()) async throws -> Int {
        let (acquired, _) = try await lease.acquire("reconciliation", for: .seconds(1_800), now: now)
        guard acquired else { return 0 }
        do {
            var reconciled = 0
            let today = configuration.calendar.day(of: now)
            for back in (1...configuration.lookbackDays).reversed() {
                if try await reconcile(day: today.adding(days: -back).description).day.status == "reconciled" { reconciled += 1 }
            }
            try await lease.release("reconciliation", cursor: nil)
            metrics.jobRun("reconciliation", items: reconciled)
            return reconciled
        } catch {
            try? await lease.release("reconciliation", cursor: nil)
            throw error
        }
    }

    /// Reconciles one report day (`YYYY-MM-DD` in ``ReportsConfiguration/calendar``'s time zone: Pacific Time, as
    /// Apple cuts them). An unavailable or unreadable report is recorded and answered, not thrown: the day is tried
    /// again on the next run.
    public func reconcile(day: String) async throws -> DayResult {
        guard let parsed = ReportCalendar.Day(day) else {
            throw StorekeeperError.invalidInput("invalid_day", "days are YYYY-MM-DD")
        }
        let interval = configuration.calendar.interval(of: parsed)
        let (start, end) = (interval.start, interval.end)
        let started = DispatchTime.now().uptimeNanoseconds
        let apple: Reconciliation.Side
        do {
            apple = try appleSide(
                try await client.salesReport(SalesReportRequest(vendorNumber: configuration.vendorNumber, reportDate: day)),
                day: day
            )
            metrics.appleCall(endpoint: "salesReports", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
        } catch  where error.kind == .noSales {
            metrics.appleCall(endpoint: "salesReports", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            apple = Reconciliation.Side()
        } catch {
            let outcome = error.kind == .notAvailable ? "not_available" : "error"
            metrics.appleCall(endpoint: "salesReports", outcome: outcome, nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            let status = error.kind == .notAvailable ? "not_available" : "failed"
            logger.notice("day not reconciled", metadata: ["day": "\(day)", "status": "\(status)", "error": "\(error)"])
            let record = ReconciliationTable.Day(day: day, status: status, message: error.description, ranAt: Date())
            try await ledger.recordReconciliation(record, findings: [])
            metrics.reconciliation(status: status)
            return DayResult(day: record, findings: [])
        }
        let ours = try await revenue.reconciliationSide(from: start, to: end, period: day, smallBusiness: smallBusiness)
        var findings = Reconciliation.compare(apple: apple, storekeeper: ours)
        for index in findings.indices { findings[index] = try await explain(findings[index], from: start) }
        var notes: [String] = []
        var analyticsCounts: [String: [SubscriptionSourcesReport.Count]] = [:]
        findings += try await transactionChecks(from: start, to: end, day: day, notes: &notes)
        if catalog.catalog.products.contains(where: { $0.kind == .autoRenewable }) {
            var appleSubscriptions: SubscriptionReconciliation.Side
            if let (analyticsSide, counts) = await appleAnalyticsSide(day: day, notes: &notes) {
                appleSubscriptions = analyticsSide
                analyticsCounts = counts
            } else {
                appleSubscriptions = await appleSubscriptionSide(day: day, notes: &notes)
                appleSubscriptions.source = "sales"
            }
            if appleSubscriptions.hasActive || appleSubscriptions.hasEvents {
                let ourSubscriptions = try await revenue.subscriptionReconciliationSide(from: start, to: end, period: day)
                findings += SubscriptionReconciliation.compare(apple: appleSubscriptions, storekeeper: ourSubscriptions)
            }
        }
        let record = ReconciliationTable.Day(
            day: day,
            status: "reconciled",
            appleUnits: apple.purchaseUnits,
            storekeeperUnits: ours.purchaseUnits,
            appleRefunds: apple.refundUnits,
            storekeeperRefunds: ours.refundUnits,
            findings: findings.count,
            message: notes.isEmpty ? nil : notes.joined(separator: "; "),
            ranAt: Date()
        )
        try await ledger.recordReconciliation(record, findings: findings, analytics: analyticsCounts)
        metrics.reconciliation(status: "reconciled")
        if !findings.isEmpty {
            logger.warning(
                "reconciliation found differences",
                metadata: ["day": "\(day)", "findings": "\(findings.count)", "kinds": "\(Set(findings.map(\.kind.rawValue)).sorted())"]
            )
        }
        try await refreshGauges()
        return DayResult(day: record, findings: findings)
    }

    /// Apple's side of the day from its Subscription and Subscription Event reports (subscriptions of this account's
    /// apps, named by Apple ID or name, see ``CatalogProduct/appleId``). A report that is not there or cannot be read
    /// leaves its part uncompared and says so in `notes`: the sales comparison stands, the next run tries again.
    func appleSubscriptionSide(day: String, notes: inout [String]) async -> SubscriptionReconciliation.Side {
        var side = SubscriptionReconciliation.Side()
        let appIds = Set(apps.apps.compactMap(\.configuration.appAppleId).map(String.init))
        let products = catalog.catalog.products.filter { $0.kind == .autoRenewable }
        func key(name: String, appleId: String, country: String) -> Reconciliation.Key {
            let product =
                products.first { $0.appleId.map(String.init) == appleId }?.id ?? products.first { $0.id == name }?.id ?? "?\(name)"
            return Reconciliation.Key(day: day, productId: product, storefront: StorefrontCountry.alpha3(country) ?? "?\(country)", currency: "")
        }
        func ours(_ appAppleId: String?) -> Bool { appIds.isEmpty || appAppleId.map(appIds.contains) ?? true }
        do {
            let rows = try SubscriptionReportRow.rows(of: try await download("SUBSCRIPTION", day: day))
            for row in rows where ours(row.appAppleId) {
                let line = key(name: row.subscriptionName, appleId: row.subscriptionAppleId, country: row.country)
                if row.activeStandardPrice > 0 { side.addActive(line, inOffer: false, count: Int64(row.activeStandardPrice)) }
                if row.activeInOffer > 0 { side.addActive(line, inOffer: true, count: Int64(row.activeInOffer)) }
            }
            side.hasActive = true
        } catch {
            notes.append("subscription report: \(error)")
        }
        do {
            let rows = try SubscriptionEventReportRow.rows(of: try await download("SUBSCRIPTION_EVENT", day: day))
            for row in rows where ours(row.appAppleId) && row.quantity > 0 {
                let group: SubscriptionReconciliation.EventGroup
                switch SubscriptionEventReportRow.group(of: row.event) {
                case .start: group = .start
                case .continuation: group = .continuation
                case .end: group = .end
                default: continue
                }
                side.addEvent(
                    group,
                    key(name: row.subscriptionName, appleId: row.subscriptionAppleId, country: row.country),
                    count: Int64(row.quantity)
                )
            }
            side.hasEvents = true
        } catch {
            notes.append("subscription event report: \(error)")
        }
        return side
    }

    /// Apple's side of the day from Analytics Reports' Subscription Event and Subscription State Standard reports,
    /// for every app with an Apple ID: the DAILY instance processed the next day, its rows of `day`. Nil (the caller
    /// falls back to Sales and Trends, the reason in `notes`) when the reports are off, no app has an Apple ID, no
    /// `ONGOING` request could be made, or the day is not covered yet.
    func appleAnalyticsSide(
        day: String,
        notes: inout [String]
    ) async
        -> (side: SubscriptionReconciliation.Side, counts: [String: [SubscriptionSourcesReport.Count]])?
    {
        guard let analytics else { return nil }
        let appIds = Set(apps.apps.compactMap(\.configuration.appAppleId).map(String.init)).sorted()
        guard !appIds.isEmpty, let parsed = ReportCalendar.Day(day) else {
            notes.append("analytics reports: no app has an Apple ID (apps.<name>.appStore.appAppleId)")
            return nil
        }
        let products = catalog.catalog.products.filter { $0.kind == .autoRenewable }
        func key(name: String, appleId: String, territory: String) -> Reconciliation.Key {
            let product =
                products.first { $0.appleId.map(String.init) == appleId }?.id ?? products.first { $0.id == name }?.id ?? "?\(name)"
            let country =
                territory.count == 3 && StorefrontCountry.alpha2(territory) != nil ? territory.uppercased() : StorefrontCountry.alpha3(territory)
            return Reconciliation.Key(day: day, productId: product, storefront: country ?? "?\(territory)", currency: "")
        }
        var side = SubscriptionReconciliation.Side()
        side.source = "analytics"
        var counts: [String: [SubscriptionSourcesReport.Count]] = [:]
        func keep(_ app: String, _ line: Reconciliation.Key, _ measure: SubscriptionSourcesReport.Count.Measure, _ source: String?, _ count: Int) {
            let downloadSource = String((source ?? "Unavailable").prefix(100))
            counts[app, default: []].append(
                .init(productId: line.productId, territory: line.storefront, measure: measure, downloadSource: downloadSource, counts: Int64(count))
            )
        }
        let processing = parsed.adding(days: 1).description
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            for app in appIds {
                let request = try await ongoingRequest(app, client: analytics)
                for name in [AnalyticsReports.subscriptionEventStandard, AnalyticsReports.subscriptionStateStandard] {
                    guard let report = try await analytics.reports(requestId: request, name: name).first else {
                        throw AppStoreConnectReportError(.notAvailable, "app \(app) has no \(name) report yet")
                    }
                    guard let instance = try await analytics.instances(reportId: report.id, processingDate: processing).first else {
                        throw AppStoreConnectReportError(.notAvailable, "no \(name) of app \(app) processed on \(processing) yet")
                    }
                    let table = try await analytics.table(instanceId: instance.id)
                    if name == AnalyticsReports.subscriptionEventStandard {
                        for row in try AnalyticsSubscriptionEventRow.rows(of: table) where row.eventDate == day && row.counts > 0 {
                            let line = key(name: row.subscriptionName, appleId: row.subscriptionId, territory: row.territory)
                            for measure in AnalyticsSubscriptionEventRow.measures(of: row.eventGrouping) {
                                let (group, kept): (SubscriptionReconciliation.EventGroup, SubscriptionSourcesReport.Count.Measure) =
                                    switch measure {
                                    case .start: (.start, .start)
                                    case .continuation: (.continuation, .continuation)
                                    case .conversion: (.conversion, .conversion)
                                    case .churn: (.end, .churn)
                                    }
                                side.addEvent(group, line, count: Int64(row.counts))
                                keep(app, line, kept, row.downloadSource, row.counts)
                            }
                        }
                    } else {
                        for row in try AnalyticsSubscriptionStateRow.rows(of: table) where row.date == day && row.counts > 0 {
                            let line = key(name: row.subscriptionName, appleId: row.subscriptionId, territory: row.territory)
                            switch AnalyticsSubscriptionStateRow.standing(of: row.stateMetric) {
                            case .inOffer:
                                side.addActive(line, inOffer: true, count: Int64(row.counts))
                                keep(app, line, .activeOffer, row.downloadSource, row.counts)
                            case .standard:
                                side.addActive(line, inOffer: false, count: Int64(row.counts))
                                keep(app, line, .activeStandard, row.downloadSource, row.counts)
                            case .notActive:
                                if ["grace period", "billing retry"].contains(row.stateMetric.lowercased()) {
                                    keep(app, line, .billingIssue, row.downloadSource, row.counts)
                                }
                            }
                        }
                    }
                }
            }
            metrics.appleCall(endpoint: "analyticsReports", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
        } catch let error as AppStoreConnectReportError where error.kind == .notAvailable {
            // The day is not processed yet, or precedes the request: Sales and Trends answers for it, without a note.
            metrics.appleCall(endpoint: "analyticsReports", outcome: "not_available", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            return nil
        } catch {
            metrics.appleCall(endpoint: "analyticsReports", outcome: "error", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            notes.append("analytics reports: \(error)")
            return nil
        }
        side.hasActive = true
        side.hasEvents = true
        side.hasConversions = true
        for app in appIds where counts[app] == nil { counts[app] = [] }
        return (side, counts)
    }

    /// The app's active `ONGOING` Analytics Reports request, made now when it has none (or Apple stopped it for
    /// inactivity): its reports start with today's data.
    func ongoingRequest(_ appAppleId: String, client: AnalyticsReportsClient) async throws -> String {
        let requests = try await client.requests(appAppleId: appAppleId, accessType: .ongoing)
        if let active = requests.first(where: { $0.attributes?.stoppedDueToInactivity != true }) { return active.id }
        let created = try await client.createRequest(appAppleId: appAppleId, accessType: .ongoing)
        logger.notice("requested App Store Connect's Analytics Reports (ONGOING)", metadata: ["app": "\(appAppleId)", "request": "\(created.id)"])
        return created.id
    }

    /// One daily subscription report (`1_3`); an empty table when Apple says nothing was sold.
    func download(_ type: String, day: String) async throws -> ReportTable {
        let started = DispatchTime.now().uptimeNanoseconds
        let request = SalesReportRequest(vendorNumber: configuration.vendorNumber, reportDate: day, reportType: type, version: "1_3")
        do {
            let table = try await client.salesReport(request)
            metrics.appleCall(endpoint: "salesReports", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            return table
        } catch  where error.kind == .noSales {
            metrics.appleCall(endpoint: "salesReports", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            let columns = type == "SUBSCRIPTION" ? SubscriptionReportRow.columns : SubscriptionEventReportRow.columns
            return try ReportTable(tsv: columns.joined(separator: "\t") + "\n")
        } catch {
            let outcome = error.kind == .notAvailable ? "not_available" : "error"
            metrics.appleCall(endpoint: "salesReports", outcome: outcome, nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            throw error
        }
    }

    /// Reconciles one of Apple's fiscal months (`YYYY-MM`, Sunday to Saturday, see ``ReportCalendar``) against its
    /// financial report (region ZZ): units sold and returned and proceeds per product × storefront × currency.
    /// Recorded under the month's name.
    public func reconcile(month: String) async throws -> DayResult {
        guard let fiscal = ReportCalendar.fiscalMonth(month) else {
            throw StorekeeperError.invalidInput("invalid_month", "months are YYYY-MM")
        }
        let interval = configuration.calendar.interval(of: fiscal)
        let (start, end) = (interval.start, interval.end)
        let started = DispatchTime.now().uptimeNanoseconds
        let apple: Reconciliation.Side
        let pricesKnown: Bool
        do {
            let table = try await client.financeReport(FinanceReportRequest(vendorNumber: configuration.vendorNumber, reportDate: month))
            metrics.appleCall(endpoint: "financeReports", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            (apple, pricesKnown) = try financeSide(table, month: month)
        } catch  where error.kind == .noSales {
            metrics.appleCall(endpoint: "financeReports", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            (apple, pricesKnown) = (Reconciliation.Side(), true)
        } catch {
            let status = error.kind == .notAvailable ? "not_available" : "failed"
            metrics.appleCall(
                endpoint: "financeReports",
                outcome: status == "failed" ? "error" : status,
                nanoseconds: DispatchTime.now().uptimeNanoseconds - started
            )
            let record = ReconciliationTable.Day(day: month, status: status, message: error.description, ranAt: Date())
            try await ledger.recordReconciliation(record, findings: [])
            metrics.reconciliation(status: status)
            return DayResult(day: record, findings: [])
        }
        let ours = try await revenue.reconciliationSide(from: start, to: end, period: month, smallBusiness: smallBusiness)
        var findings = Reconciliation.compare(apple: apple, storekeeper: ours, comparePrices: pricesKnown)
        for index in findings.indices { findings[index] = try await explain(findings[index], from: start) }
        let record = ReconciliationTable.Day(
            day: month,
            status: "reconciled",
            appleUnits: apple.purchaseUnits,
            storekeeperUnits: ours.purchaseUnits,
            appleRefunds: apple.refundUnits,
            storekeeperRefunds: ours.refundUnits,
            findings: findings.count,
            ranAt: Date()
        )
        try await ledger.recordReconciliation(record, findings: findings)
        metrics.reconciliation(status: "reconciled")
        return DayResult(day: record, findings: findings)
    }

    /// Apple's side of a month from its financial report: sales (`S`) and returns (`R`) of this account's products,
    /// proceeds as Apple pays them; and whether every line carried a customer price.
    func financeSide(_ table: ReportTable, month: String) throws(AppStoreConnectReportError) -> (Reconciliation.Side, Bool) {
        let rows: [FinanceReportRow]
        do {
            rows = try FinanceReportRow.rows(of: table)
        } catch {
            throw AppStoreConnectReportError(.malformed, "\(error)")
        }
        let products = catalog.catalog
        var side = Reconciliation.Side()
        var pricesKnown = true
        for row in rows where row.quantity != 0 && products.product(row.vendorIdentifier) != nil {
            let key = Reconciliation.Key(
                day: month,
                productId: row.vendorIdentifier,
                storefront: StorefrontCountry.alpha3(row.countryOfSale) ?? "?\(row.countryOfSale)",
                currency: row.customerCurrency ?? row.partnerShareCurrency
            )
            let units = Int64(row.quantity.magnitude)
            let price = row.customerPrice.map { Int64(clamping: $0.magnitude).multipliedReportingOverflow(by: units) }
            if row.customerPrice == nil { pricesKnown = false }
            let customerPrice = price.map { $0.overflow ? Int64.max : $0.partialValue } ?? 0
            let proceeds = Int64(clamping: row.extendedPartnerShare.magnitude)
            if row.quantity > 0 && row.saleOrReturn != "R" {
                side.purchases[key, default: .init()].add(units: units, customerPrice: customerPrice, proceeds: proceeds)
            } else {
                side.refunds[key, default: .init()].add(units: units, customerPrice: customerPrice, proceeds: proceeds)
            }
        }
        return (side, pricesKnown)
    }

    /// The findings of the 35 days up to the latest reconciled, by kind, for `/metrics`.
    func refreshGauges() async throws {
        guard let latest = try await store.latestDay(), let end = ReportCalendar.Day(latest) else { return }
        metrics.reconciliationFindings(try await store.counts(from: end.adding(days: -34).description, to: latest))
    }

    /// Apple's side of the day: in-app purchase lines of this account's apps (products in the catalog, or whose
    /// parent is one of the apps), purchases and refunds apart.
    func appleSide(_ table: ReportTable, day: String) throws(AppStoreConnectReportError) -> Reconciliation.Side {
        let rows: [SalesReportRow]
        do {
            rows = try SalesReportRow.rows(of: table)
        } catch {
            throw AppStoreConnectReportError(.malformed, "\(error)")
        }
        let products = catalog.catalog
        let bundleIds = Set(apps.apps.map(\.configuration.bundleId))
        var side = Reconciliation.Side()
        for row in rows where row.isInAppPurchase && row.units != 0 {
            guard products.product(row.sku) != nil || row.parentIdentifier.map(bundleIds.contains) == true else { continue }
            let key = Reconciliation.Key(
                day: day,
                productId: row.sku,
                storefront: StorefrontCountry.alpha3(row.countryCode) ?? "?\(row.countryCode)",
                currency: row.customerCurrency
            )
            let units = Int64(row.units.magnitude)
            // Amounts are per unit in the report; both factors are bounded by the parser, the product saturates.
            func total(_ each: Int64) -> Int64 {
                let (product, overflow) = Int64(clamping: each.magnitude).multipliedReportingOverflow(by: units)
                return overflow ? .max : product
            }
            if row.units > 0 {
                side.purchases[key, default: .init()].add(
                    units: units,
                    customerPrice: total(row.customerPrice),
                    proceeds: total(row.developerProceeds)
                )
            } else {
                side.refunds[key, default: .init()].add(units: units, customerPrice: total(row.customerPrice), proceeds: total(row.developerProceeds))
            }
        }
        return side
    }

    /// The per-transaction check, which counts cannot cancel out (a lost order and a forged delivery on one line
    /// compare equal): every delivered production transaction purchased in the day has its stored signed payload
    /// verified again to Apple's root and compared with the stored row, and up to `transactionLookupsPerDay` of them
    /// are looked up with Get Transaction Info; one Apple does not know is a finding. Transactions from legacy
    /// receipts have no signed payload: they are only looked up.
    func transactionChecks(from start: Date, to end: Date, day: String, notes: inout [String]) async throws -> [Reconciliation.Finding] {
        var findings: [Reconciliation.Finding] = []
        func finding(_ kind: Reconciliation.Kind, _ row: RevenueStore.Delivered, _ detail: String) -> Reconciliation.Finding {
            Reconciliation.Finding(
                kind: kind,
                key: Reconciliation.Key(day: day, productId: row.productId, storefront: row.storefront ?? "", currency: row.currency ?? ""),
                appleUnits: 0,
                storekeeperUnits: 1,
                appleAmount: 0,
                storekeeperAmount: 0,
                transactionIds: [row.transactionId],
                detail: detail
            )
        }
        let budget = configuration.transactionLookupsPerDay
        var lookable = 0
        var asked = 0
        var unanswered = 0
        var rateLimited = false
        var after: RevenueStore.Delivered?
        // A page at a time: a day may hold a million transactions.
        while true {
            let page = try await revenue.deliveredProduction(from: start, to: end, after: after)
            guard let last = page.last else { break }
            after = last
            for row in page {
                guard let app = apps.app(bundleId: row.bundleId) else { continue }
                if let signed = row.signedData {
                    do {
                        let payload = try await app.verifier.verifyTransaction(signed)
                        if payload.transactionId != row.transactionId || payload.productId != row.productId || payload.bundleId != row.bundleId {
                            findings.append(
                                finding(.signatureInvalid, row, "the stored signed payload is Apple's, for another transaction than the stored row")
                            )
                        }
                    } catch {
                        findings.append(finding(.signatureInvalid, row, "the stored signed payload does not verify to Apple's root: \(error)"))
                    }
                }
                guard let client = app.serverAPI(for: "Production") else { continue }
                lookable += 1
                guard asked < budget, !rateLimited else { continue }
                asked += 1
                let started = DispatchTime.now().uptimeNanoseconds
                do {
                    _ = try await client.getTransactionInfo(transactionId: row.transactionId)
                    metrics.appleCall(endpoint: "transactionInfo", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
                } catch let error as AppStoreServerAPIError where error.httpStatus == 404 {
                    metrics.appleCall(endpoint: "transactionInfo", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
                    findings.append(
                        finding(
                            .unknownToApple,
                            row,
                            "Apple's Get Transaction Info does not know it: delivered without a purchase (forged, or written around Storekeeper)"
                        )
                    )
                } catch let error as AppStoreServerAPIError where error.httpStatus == 429 {
                    metrics.appleCall(endpoint: "transactionInfo", outcome: "error", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
                    unanswered += 1
                    rateLimited = true
                } catch {
                    metrics.appleCall(endpoint: "transactionInfo", outcome: "error", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
                    unanswered += 1
                }
            }
        }
        if budget > 0, asked < lookable {
            notes.append(
                "Apple was asked about \(asked) of \(lookable) delivered transactions (reports.transactionLookupsPerDay, Apple's rate limits)"
            )
        }
        if unanswered > 0 { notes.append("\(unanswered) transaction lookups went unanswered; reconciling the day again asks again") }
        return findings
    }

    /// Adds what Storekeeper can find out about a finding: transactions Apple does not know, purchases waiting on the
    /// recovery list.
    func explain(_ finding: Reconciliation.Finding, from start: Date) async throws -> Reconciliation.Finding {
        var finding = finding
        switch finding.kind {
        case .storekeeperOnly:
            guard let client = apps.apps.lazy.compactMap({ $0.serverAPI(for: "Production") }).first else {
                finding.detail += "; no App Store Server API key to ask Apple which transactions it knows"
                return finding
            }
            var unknown: [String] = []
            var known: [String] = []
            for id in finding.transactionIds.prefix(Self.confirmLimit) {
                let started = DispatchTime.now().uptimeNanoseconds
                do {
                    _ = try await client.getTransactionInfo(transactionId: id)
                    metrics.appleCall(endpoint: "transactionInfo", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
                    known.append(id)
                } catch let error as AppStoreServerAPIError where error.httpStatus == 404 {
                    metrics.appleCall(endpoint: "transactionInfo", outcome: "ok", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
                    unknown.append(id)
                } catch {
                    metrics.appleCall(endpoint: "transactionInfo", outcome: "error", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
                }
            }
            if !unknown.isEmpty {
                finding.detail +=
                    "; Apple does not know \(unknown.joined(separator: ", ")): delivered without a purchase (forged, or written around Storekeeper)"
                finding.transactionIds = unknown + finding.transactionIds.filter { !unknown.contains($0) }
            } else if !known.isEmpty {
                finding.detail += "; Apple knows every transaction asked about: look for sandbox purchases taken for production or a late report"
            }
        case .appleOnly:
            let parked = try await store.parked(productId: finding.key.productId, from: start, to: Date())
            finding.detail +=
                parked.isEmpty
                ? "; not on the recovery list: the purchase is unfinished on the customer's device (StorekeeperKit submits it at the next launch) or support restores it from the customer's receipt"
                : "; on the recovery list: \(parked.joined(separator: ", "))"
            if !parked.isEmpty { finding.transactionIds = parked }
        default:
            break
        }
        return finding
    }
}
