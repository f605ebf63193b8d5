import Foundation
import SQLKit
import StorekeeperCore
import Synchronization

/// The read side of the money reports: delivered transactions in a range of purchase days, each original
/// transaction with its history (a subscription's earlier periods decide its commission), streamed row by row so
/// memory holds one original transaction at a time, not the range.
public struct RevenueStore: Sendable {
    let provider: any DatabaseProvider

    public init(provider: any DatabaseProvider) { self.provider = provider }

    /// The report for purchases in `[from, to)`, and how many transactions were left out (not revenue).
    public func report(from: Date, to: Date, smallBusiness: SmallBusinessProgram) async throws -> (lines: [RevenueLine], skipped: Int) {
        let builder = try await histories(from: from, to: to, into: RevenueReportBuilder(from: from, to: to, smallBusiness: smallBusiness)) {
            $0.add(history: $1)
        }
        return (builder.report, builder.skipped)
    }

    /// Storekeeper's side of a reconciliation of `[from, to)` (one report's day or fiscal month, named `period`):
    /// purchases made in it, refunds applied in it.
    public func reconciliationSide(
        from: Date,
        to: Date,
        period: String,
        smallBusiness: SmallBusinessProgram
    ) async throws -> Reconciliation.Side {
        var builder = try await histories(
            from: from,
            to: to,
            into: Reconciliation.StorekeeperSideBuilder(from: from, to: to, period: period, smallBusiness: smallBusiness)
        ) { $0.add(history: $1) }
        let refunds = try await provider.withReader { db in
            // Refunds Storekeeper applied in the range (revocations still standing), whenever the purchase was. The
            // commerce columns are store_transactions' alone.
            try await db.raw(
                """
                SELECT r.revoked_at, t.transaction_id, t.original_transaction_id, t.product_id, t.product_kind, t.environment,
                    t.quantity, t.purchase_date, t.expires_date, \(unsafeRaw: StoreTransactionsTable.commerceColumns)
                FROM revocations r JOIN store_transactions t ON t.transaction_id = r.transaction_id
                WHERE r.revoked_at >= \(bind: from.millis) AND r.revoked_at < \(bind: to.millis) AND r.kind = 'refund'
                    AND r.status = 'revoked'
                """
            ).all().map { row in (try Self.transaction(row), Date(millis: try row.decode(column: "revoked_at", as: Int64.self))) }
        }
        for (transaction, refundedAt) in refunds { builder.addRefund(transaction, refundedAt: refundedAt) }
        return builder.side
    }

    /// Storekeeper's side of a subscription reconciliation of the report day `[from, to)` named `period`: production
    /// subscriptions active at `to` (the latest period of each, unless revoked by then; family members' copies and
    /// assigned purchases left out) by product and storefront, in an offer or not; periods that began in the day, first ones apart; and
    /// Apple's `EXPIRED` messages signed in the day, on the subscription's latest product and storefront.
    public func subscriptionReconciliationSide(from: Date, to: Date, period: String) async throws -> SubscriptionReconciliation.Side {
        var initial = SubscriptionReconciliation.Side()
        initial.hasActive = true
        initial.hasEvents = true
        initial.hasConversions = true
        let sink = RowSink(SubscriptionSideProgress(side: initial))
        let notShared = "(t.ownership_type IS NULL OR t.ownership_type NOT IN ('FAMILY_SHARED', 'ASSIGNED'))"
        try await provider.withReader { db in
            // Streamed in original transaction order: memory holds one subscription at a time, not the day's.
            try await db.raw(
                """
                SELECT t.original_transaction_id, t.product_id, t.storefront, t.price, t.offer_discount_type
                FROM store_transactions t
                WHERE t.product_kind = 'autoRenewable' AND t.environment = 'Production' AND t.purchase_date < \(bind: to.millis)
                    AND t.expires_date > \(bind: to.millis) AND \(unsafeRaw: notShared)
                    AND NOT EXISTS (SELECT 1 FROM revocations r WHERE r.transaction_id = t.transaction_id AND r.status = 'revoked'
                        AND r.revoked_at <= \(bind: to.millis))
                ORDER BY t.original_transaction_id, t.purchase_date
                """
            ).run { row in
                sink.add { progress in
                    let original = try row.decode(column: "original_transaction_id", as: String.self)
                    let key = Reconciliation.Key(
                        day: period,
                        productId: try row.decode(column: "product_id", as: String.self),
                        storefront: try row.decode(column: "storefront", as: String?.self) ?? "?",
                        currency: ""
                    )
                    let inOffer =
                        try row.decode(column: "offer_discount_type", as: String?.self) != nil
                        || (try row.decode(column: "price", as: Int64?.self) ?? 0) == 0
                    // The latest period of each subscription counts, once.
                    if progress.original != original, let pending = progress.pending {
                        progress.side.addActive(pending.key, inOffer: pending.inOffer)
                    }
                    progress.original = original
                    progress.pending = (key, inOffer)
                }
            }
            sink.add { progress in
                if let pending = progress.pending { progress.side.addActive(pending.key, inOffer: pending.inOffer) }
                progress.pending = nil
            }
            try await db.raw(
                """
                SELECT t.transaction_id, t.original_transaction_id, t.product_id, t.storefront, t.price, t.offer_discount_type,
                    p.price AS previous_price, p.offer_discount_type AS previous_offer, p.transaction_id AS previous_id
                FROM store_transactions t
                LEFT JOIN store_transactions p ON p.transaction_id = (
                    SELECT q.transaction_id FROM store_transactions q
                    WHERE q.original_transaction_id = t.original_transaction_id AND q.purchase_date < t.purchase_date
                    ORDER BY q.purchase_date DESC, q.transaction_id DESC LIMIT 1)
                WHERE t.product_kind = 'autoRenewable' AND t.environment = 'Production' AND t.purchase_date >= \(bind: from.millis)
                    AND t.purchase_date < \(bind: to.millis) AND \(unsafeRaw: notShared)
                ORDER BY t.purchase_date
                """
            ).run { row in
                sink.add { progress in
                    let id = try row.decode(column: "transaction_id", as: String.self)
                    let key = Reconciliation.Key(
                        day: period,
                        productId: try row.decode(column: "product_id", as: String.self),
                        storefront: try row.decode(column: "storefront", as: String?.self) ?? "?",
                        currency: ""
                    )
                    let first = id == (try row.decode(column: "original_transaction_id", as: String.self))
                    progress.side.addEvent(first ? .start : .continuation, key, transactionId: id)
                    // A conversion: a paid period right after one in an offer (a free trial or a discounted price).
                    let inOffer =
                        try row.decode(column: "offer_discount_type", as: String?.self) != nil
                        || (try row.decode(column: "price", as: Int64?.self) ?? 0) == 0
                    let previousInOffer =
                        try row.decode(column: "previous_id", as: String?.self) != nil
                        && (try row.decode(column: "previous_offer", as: String?.self) != nil
                            || (try row.decode(column: "previous_price", as: Int64?.self) ?? 0) == 0)
                    if !first, !inOffer, previousInOffer { progress.side.addEvent(.conversion, key, transactionId: id) }
                }
            }
            try await db.raw(
                """
                SELECT n.original_transaction_id,
                    (SELECT t.product_id FROM store_transactions t WHERE t.original_transaction_id = n.original_transaction_id
                     ORDER BY t.purchase_date DESC LIMIT 1) AS product,
                    (SELECT t.storefront FROM store_transactions t WHERE t.original_transaction_id = n.original_transaction_id
                     ORDER BY t.purchase_date DESC LIMIT 1) AS storefront
                FROM notifications n
                WHERE n.notification_type = 'EXPIRED' AND n.environment = 'Production' AND n.signed_date >= \(bind: from.millis)
                    AND n.signed_date < \(bind: to.millis)
                """
            ).run { row in
                sink.add { progress in
                    guard let product = try row.decode(column: "product", as: String?.self) else { return }
                    let key = Reconciliation.Key(
                        day: period,
                        productId: product,
                        storefront: try row.decode(column: "storefront", as: String?.self) ?? "?",
                        currency: ""
                    )
                    progress.side.addEvent(.end, key, transactionId: try row.decode(column: "original_transaction_id", as: String?.self))
                }
            }
        }
        return try sink.finish().side
    }

    /// Subscription analytics for `[from, to)`: every subscription's periods before `to`, and the stores' lifecycle
    /// messages signed in range, by product, counted as `lifecycle` (the store's mapping) says.
    public func subscriptionAnalytics(
        from: Date,
        to: Date,
        lifecycle: LifecycleCounting
    ) async throws -> SubscriptionAnalyticsBuilder {
        var builder = try await stream(
            """
            SELECT transaction_id, original_transaction_id, product_id, product_kind, environment, quantity,
                purchase_date, expires_date, \(unsafeRaw: StoreTransactionsTable.commerceColumns)
            FROM store_transactions
            WHERE product_kind = 'autoRenewable' AND environment = 'Production' AND purchase_date < \(bind: to.millis)
            ORDER BY original_transaction_id, purchase_date
            """,
            into: SubscriptionAnalyticsBuilder(from: from, to: to)
        ) { $0.add(history: $1) }
        let counts = try await provider.withReader { db in
            try await db.raw(
                """
                SELECT kind, subtype, product, COUNT(*) AS n FROM (
                    SELECT n.notification_type AS kind, n.subtype AS subtype,
                        (SELECT t.product_id FROM store_transactions t WHERE t.original_transaction_id = n.original_transaction_id
                         ORDER BY t.purchase_date DESC LIMIT 1) AS product
                    FROM notifications n
                    WHERE n.signed_date >= \(bind: from.millis) AND n.signed_date < \(bind: to.millis) AND n.environment = 'Production'
                        AND n.notification_type IN (\(binds: lifecycle.types))
                ) messages WHERE product IS NOT NULL GROUP BY kind, subtype, product
                """
            ).all().map { row in
                (
                    try row.decode(column: "kind", as: String.self), try row.decode(column: "subtype", as: String?.self),
                    try row.decode(column: "product", as: String.self), Int(try row.decode(column: "n", as: Int64.self))
                )
            }
        }
        for (kind, subtype, product, count) in counts {
            if let counted = lifecycle.count(kind, subtype) { builder.add(counted, count: count, productId: product) }
        }
        return builder
    }

    /// Streams every original transaction with a purchase in `[from, to)`, with its whole history up to `to`, into
    /// `state` through `add`.
    public func histories<State: Sendable>(
        from: Date,
        to: Date,
        into state: State,
        add: @escaping @Sendable (inout State, [RevenueTransaction]) -> Void
    ) async throws -> State {
        try await stream(
            """
            SELECT transaction_id, original_transaction_id, product_id, product_kind, environment, quantity,
                purchase_date, expires_date, \(unsafeRaw: StoreTransactionsTable.commerceColumns)
            FROM store_transactions
            WHERE purchase_date < \(bind: to.millis) AND original_transaction_id IN (
                SELECT original_transaction_id FROM store_transactions
                WHERE purchase_date >= \(bind: from.millis) AND purchase_date < \(bind: to.millis))
            ORDER BY original_transaction_id, purchase_date
            """,
            into: state,
            add: add
        )
    }

    /// Streams the rows of `query` (transactions ordered by original transaction) one original at a time.
    private func stream<State: Sendable>(
        _ query: SQLQueryString,
        into state: State,
        add: @escaping @Sendable (inout State, [RevenueTransaction]) -> Void
    ) async throws -> State {
        let accumulator = HistoryAccumulator(state)
        try await provider.withReader { db in
            try await db.raw(query).run { row in
                accumulator.progress.withLock { progress in
                    guard progress.failure == nil else { return }
                    do {
                        let transaction = try Self.transaction(row)
                        if progress.original != transaction.originalTransactionId {
                            if !progress.history.isEmpty { add(&progress.state, progress.history) }
                            progress.history.removeAll(keepingCapacity: true)
                            progress.original = transaction.originalTransactionId
                        }
                        progress.history.append(transaction)
                    } catch {
                        progress.failure = error
                    }
                }
            }
        }
        return try accumulator.progress.withLock { progress in
            if let failure = progress.failure { throw failure }
            if !progress.history.isEmpty { add(&progress.state, progress.history) }
            return progress.state
        }
    }

    /// A delivered transaction as a per-transaction reconciliation checks it.
    public struct Delivered: Sendable, Hashable {
        public var transactionId: String
        public var bundleId: String
        public var productId: String
        /// Epoch milliseconds: with the id, where the next page starts.
        public var purchaseDate: Int64
        public var storefront: String?
        public var currency: String?
        /// The signed payload as Apple signed it (absent for legacy receipts).
        public var signedData: String?
    }

    /// Delivered production transactions purchased in `[from, to)`, family members' copies left out, in purchase
    /// order after `after` (the previous page's last row), at most `limit` (a page: a day may hold a million; the
    /// purchase date index bounds each page's scan); each signed payload exactly as it was received (stored with its
    /// certificate header shared, see ``StoredSignedData``).
    public func deliveredProduction(from: Date, to: Date, after: Delivered? = nil, limit: Int = 2_000) async throws -> [Delivered] {
        let afterDate = after?.purchaseDate ?? from.millis - 1
        let afterId = after?.transactionId ?? ""
        return try await provider.withReader { db in
            var rows = try await db.raw(
                """
                SELECT transaction_id, bundle_id, product_id, purchase_date, storefront, currency, signed_data FROM store_transactions
                WHERE purchase_date >= \(bind: max(from.millis, afterDate)) AND purchase_date < \(bind: to.millis)
                    AND (purchase_date > \(bind: afterDate) OR transaction_id > \(bind: afterId))
                    AND environment = 'Production' AND (ownership_type IS NULL OR ownership_type <> 'FAMILY_SHARED')
                ORDER BY purchase_date, transaction_id LIMIT \(bind: limit)
                """
            ).all().map { row in
                Delivered(
                    transactionId: try row.decode(column: "transaction_id", as: String.self),
                    bundleId: try row.decode(column: "bundle_id", as: String.self),
                    productId: try row.decode(column: "product_id", as: String.self),
                    purchaseDate: try row.decode(column: "purchase_date", as: Int64.self),
                    storefront: try row.decode(column: "storefront", as: String?.self),
                    currency: try row.decode(column: "currency", as: String?.self),
                    signedData: try row.decode(column: "signed_data", as: String?.self)
                )
            }
            let digests = Set(rows.flatMap { $0.signedData.map(CompactNotificationBody.references(in:)) ?? [] })
            guard !digests.isEmpty else { return rows }
            let headers = try await NotificationHeadersTable.find(digests, on: db)
            for index in rows.indices {
                guard let text = rows[index].signedData, !CompactNotificationBody.references(in: text).isEmpty else { continue }
                rows[index].signedData = try CompactNotificationBody.expand(text, headers: headers)
            }
            return rows
        }
    }

    /// What retention offers kept in `[from, to)`: each transaction charged at a retention offer (`offerType` 5),
    /// with the latest of Storekeeper's retention answers about the same subscription that offered the same offer
    /// before it (its rule), summed by ``RetentionSavesReport``.
    /// Apple's Analytics Reports counts kept for the report days `[fromDay, toDay)` (`YYYY-MM-DD`), by product and
    /// download source: the events summed over the days, the active subscriptions of the last day Apple reported.
    public func subscriptionSources(fromDay: String, toDay: String) async throws -> SubscriptionSourcesReport {
        try await provider.withReader { db in
            let days = try await db.raw(
                """
                SELECT DISTINCT day FROM analytics_counts WHERE day >= \(bind: fromDay) AND day < \(bind: toDay) ORDER BY day
                """
            ).all().map { try $0.decode(column: "day", as: String.self) }
            var lines: [[String]: SubscriptionSourcesReport.Line] = [:]
            func add(_ row: any SQLRow, lastDay: Bool) throws {
                let product = try row.decode(column: "product_id", as: String.self)
                let source = try row.decode(column: "download_source", as: String.self)
                let total = try row.decode(column: "total", as: Int64.self)
                var line = lines[[product, source]] ?? SubscriptionSourcesReport.Line(productId: product, downloadSource: source)
                switch SubscriptionSourcesReport.Count.Measure(rawValue: try row.decode(column: "measure", as: String.self)) {
                case .start?: line.starts = Reconciliation.Tally.saturating(line.starts, total)
                case .continuation?: line.continuations = Reconciliation.Tally.saturating(line.continuations, total)
                case .conversion?: line.conversions = Reconciliation.Tally.saturating(line.conversions, total)
                case .churn?: line.churn = Reconciliation.Tally.saturating(line.churn, total)
                case .activeStandard?, .activeOffer?:
                    if lastDay { line.activeAtEnd = Reconciliation.Tally.saturating(line.activeAtEnd, total) }
                case .billingIssue?, nil: break
                }
                lines[[product, source]] = line
            }
            for row in try await db.raw(
                """
                SELECT product_id, download_source, measure, CAST(SUM(counts) AS BIGINT) AS total FROM analytics_counts
                WHERE day >= \(bind: fromDay) AND day < \(bind: toDay) AND measure IN ('start', 'continuation', 'conversion', 'churn')
                GROUP BY product_id, download_source, measure
                """
            ).all() { try add(row, lastDay: false) }
            if let last = days.last {
                for row in try await db.raw(
                    """
                    SELECT product_id, download_source, measure, CAST(SUM(counts) AS BIGINT) AS total FROM analytics_counts
                    WHERE day = \(bind: last) AND measure IN ('active_standard', 'active_offer')
                    GROUP BY product_id, download_source, measure
                    """
                ).all() { try add(row, lastDay: true) }
            }
            return SubscriptionSourcesReport(
                days: days,
                lastDay: days.last,
                lines: lines.values.sorted { ($0.productId, $0.downloadSource) < ($1.productId, $1.downloadSource) }
            )
        }
    }

    public func retentionSaves(from: Date, to: Date, smallBusiness: SmallBusinessProgram) async throws -> RetentionSavesReport {
        let rows = try await provider.withReader { db in
            try await db.raw(
                """
                SELECT t.transaction_id, t.original_transaction_id, t.product_id, t.product_kind, t.environment, t.quantity,
                    t.purchase_date, t.expires_date, \(unsafeRaw: StoreTransactionsTable.commerceColumns),
                    (SELECT a.rule_id FROM retention_answers a WHERE a.original_transaction_id = t.original_transaction_id
                        AND a.offer_id = t.offer_id AND a.answered_at <= t.purchase_date
                        ORDER BY a.answered_at DESC LIMIT 1) AS rule_id
                FROM store_transactions t
                WHERE t.offer_type = 5 AND t.purchase_date >= \(bind: from.millis) AND t.purchase_date < \(bind: to.millis)
                ORDER BY t.purchase_date, t.transaction_id
                """
            ).all().map { row in (try Self.transaction(row), try row.decode(column: "rule_id", as: String?.self)) }
        }
        var report = RetentionSavesReport()
        for (transaction, rule) in rows { report.add(transaction, ruleId: rule, smallBusiness: smallBusiness) }
        return report
    }

    static func transaction(_ row: any SQLRow) throws -> RevenueTransaction {
        var transaction = RevenueTransaction(
            transactionId: try row.decode(column: "transaction_id", as: String.self),
            originalTransactionId: try row.decode(column: "original_transaction_id", as: String.self),
            productId: try row.decode(column: "product_id", as: String.self),
            kind: ProductKind(rawValue: try row.decode(column: "product_kind", as: String.self)) ?? .consumable,
            purchaseDate: Date(millis: try row.decode(column: "purchase_date", as: Int64.self)),
            expiresDate: try row.decode(column: "expires_date", as: Int64?.self).map(Date.init(millis:)),
            quantity: Int(try row.decode(column: "quantity", as: Int64.self)),
            sandbox: try row.decode(column: "environment", as: String.self) != "Production",
            commerce: try StoreTransactionsTable.commerce(row: row)
        )
        transaction.store = try StoreTransactionsTable.store(row: row)
        return transaction
    }
}

/// Gathers rows into one original transaction's history at a time (rows arrive on the database's thread).
private final class HistoryAccumulator<State: Sendable>: Sendable {
    struct Progress {
        var state: State
        var original: String?
        var history: [RevenueTransaction] = []
        var failure: (any Error)?
    }
    let progress: Mutex<Progress>
    init(_ state: State) { progress = Mutex(Progress(state: state)) }
}

/// Storekeeper's subscription side as rows stream in.
private struct SubscriptionSideProgress: Sendable {
    var side: SubscriptionReconciliation.Side
    var original: String?
    var pending: (key: Reconciliation.Key, inOffer: Bool)?
}

/// State folded over streamed rows (rows arrive on the database's event loop); the first failure is kept and
/// rethrown at the end.
private final class RowSink<State: Sendable>: Sendable {
    private let progress: Mutex<(state: State, failure: (any Error)?)>

    init(_ state: State) { progress = Mutex((state, nil)) }

    /// Folds one row; after a failure, rows are skipped.
    func add(_ body: (inout State) throws -> Void) {
        progress.withLock { progress in
            guard progress.failure == nil else { return }
            do { try body(&progress.state) } catch { progress.failure = error }
        }
    }

    func finish() throws -> State {
        try progress.withLock { progress in
            if let failure = progress.failure { throw failure }
            return progress.state
        }
    }
}

/// Which stored notifications the subscription analytics count, and as what: the store's mapping provides it, so
/// no store's type names live here.
public struct LifecycleCounting: Sendable {
    /// The stored notification types worth reading.
    public var types: [String]
    public var count: @Sendable (_ type: String, _ subtype: String?) -> SubscriptionAnalyticsBuilder.LifecycleCount?

    public init(
        types: [String],
        count: @escaping @Sendable (_ type: String, _ subtype: String?) -> SubscriptionAnalyticsBuilder.LifecycleCount?
    ) {
        self.types = types
        self.count = count
    }
}
