import Foundation
import SQLKit
import StorekeeperCore

/// The subscription analytics' rollups: kept current by ``refresh(limit:)`` (each changed subscription's cells taken
/// out as its last facts gave them and put back as its facts are now), rebuilt from the ledger's records by
/// ``rebuild()``, and read by day or cohort without touching the transactions table.
public struct AnalyticsStore: Sendable {
    let provider: any DatabaseProvider
    let lifecycle: LifecycleCounting

    /// `lifecycle` says which stored store messages are churns (the store's mapping).
    public init(provider: any DatabaseProvider, lifecycle: LifecycleCounting) {
        self.provider = provider
        self.lifecycle = lifecycle
    }

    /// The advisory lock refreshes take on PostgreSQL: one at a time, so two servers never both take a subscription's
    /// old cells out.
    static let refreshLock: Int64 = 4_242_424_250

    /// Rolls up at most `limit` changed subscriptions in one transaction; returns how many were rolled up and how
    /// many changes are still queued.
    @discardableResult
    public func refresh(limit: Int = 200) async throws -> (rolled: Int, remaining: Int) {
        let kind = provider.kind
        let lifecycle = self.lifecycle
        return try await provider.withTransaction { db in
            if kind == .postgres { try await db.raw("SELECT pg_advisory_xact_lock(\(bind: Self.refreshLock))").run() }
            let queued = try await AnalyticsRollupTables.queued(limit: limit, on: db)
            guard !queued.isEmpty else { return (0, 0) }
            let originals = Array(Set(queued.map(\.1))).sorted()
            var old: [String: SubscriptionRollup] = [:]
            for (id, text) in try await AnalyticsRollupTables.facts(of: originals, on: db) {
                guard let facts = SubscriptionRollup(encoded: text) else {
                    throw StorageError.unreadable("analytics_subscriptions.facts of \(id)")
                }
                old[id] = facts
            }
            let current = try await Self.facts(of: originals, lifecycle: lifecycle, on: db)
            var change = SubscriptionRollup.Cells()
            for original in originals {
                let before = old[original]?.cells ?? SubscriptionRollup.Cells()
                let after = current[original]?.cells ?? SubscriptionRollup.Cells()
                change.merge(after.subtracting(before))
            }
            try await AnalyticsRollupTables.add(change, on: db)
            try await AnalyticsRollupTables.forgetFacts(originals.filter { current[$0] == nil && old[$0] != nil }, on: db)
            let kept = originals.compactMap { id in current[id].map { (id, $0) } }.filter { old[$0.0] != $0.1 }
            try await AnalyticsRollupTables.saveFacts(kept.map { ($0.0, $0.1.encoded) }, on: db)
            try await AnalyticsRollupTables.dequeue(queued.map(\.0), on: db)
            return (originals.count, try await AnalyticsRollupTables.queuedCount(on: db))
        }
    }

    /// Refreshes until nothing is queued (or `maxBatches` ran); returns how many changes are still queued.
    @discardableResult
    public func refreshAll(limit: Int = 200, maxBatches: Int = .max) async throws -> Int {
        var batches = 0
        while true {
            let (rolled, remaining) = try await refresh(limit: limit)
            batches += 1
            if rolled == 0 || remaining == 0 || batches >= maxBatches { return remaining }
        }
    }

    /// Changes queued and not yet rolled up.
    public func pending() async throws -> Int {
        try await provider.withReader { db in
            try await AnalyticsRollupTables.queuedCount(on: db)
        }
    }

    /// Throws the rollups away and rolls every subscription up again from the ledger's records (transactions,
    /// revocations, the stores' expiry messages, subscription states). Returns how many subscriptions it rolled up.
    @discardableResult
    public func rebuild() async throws -> Int {
        let kind = provider.kind
        let queued = try await provider.withTransaction { db in
            if kind == .postgres { try await db.raw("SELECT pg_advisory_xact_lock(\(bind: Self.refreshLock))").run() }
            try await AnalyticsRollupTables.clear(on: db)
            let originals = try await AnalyticsRollupTables.subscriptionOriginals(on: db)
            try await AnalyticsRollupTables.enqueue(originals, on: db)
            return originals.count
        }
        // The rollup job may take batches of the queue alongside this loop: the answer is how many subscriptions were
        // queued for the rebuild, not how many this loop happened to roll (which was 0 once, in CI).
        while true {
            let (count, remaining) = try await refresh(limit: 500)
            if count == 0 || remaining == 0 { return queued }
        }
    }

    // MARK: - Reading

    /// Which subscriptions a read covers: each set field must equal the cell's.
    public struct Filter: Sendable, Hashable {
        public var app: String?
        public var store: Store?
        public var productId: String?
        public var storefront: String?
        public var offer: String?
        public var currency: String?

        public init(
            app: String? = nil,
            store: Store? = nil,
            productId: String? = nil,
            storefront: String? = nil,
            offer: String? = nil,
            currency: String? = nil
        ) {
            self.app = app
            self.store = store
            self.productId = productId
            self.storefront = storefront
            self.offer = offer
            self.currency = currency
        }

        var clause: SQLQueryString {
            var clause: SQLQueryString = ""
            if let app { clause = clause + " AND app = \(bind: app)" }
            if let store { clause = clause + " AND store = \(bind: store.rawValue)" }
            if let productId { clause = clause + " AND product_id = \(bind: productId)" }
            if let storefront { clause = clause + " AND storefront = \(bind: storefront)" }
            if let offer { clause = clause + " AND offer = \(bind: offer)" }
            if let currency { clause = clause + " AND currency = \(bind: currency)" }
            return clause
        }

        /// Whether a subscription's cell passes.
        public func matches(_ d: SubscriptionRollup.Dimensions) -> Bool {
            (app.map { $0 == d.app } ?? true) && (store.map { $0 == d.store } ?? true)
                && (productId.map { $0 == d.productId } ?? true) && (storefront.map { $0 == d.storefront } ?? true)
                && (offer.map { $0 == d.offer } ?? true) && (currency.map { $0 == d.currency } ?? true)
        }
    }

    /// A dimension a chart can be broken down by.
    public enum Dimension: String, Sendable, Hashable, CaseIterable {
        case app, store, product, storefront, offer, currency

        var column: String { self == .product ? "product_id" : rawValue }

        public func value(_ d: SubscriptionRollup.Dimensions) -> String {
            switch self {
            case .app: d.app
            case .store: d.store.rawValue
            case .product: d.productId
            case .storefront: d.storefront
            case .offer: d.offer
            case .currency: d.currency
            }
        }
    }

    /// The daily cells of `metrics` for the days `[fromDay, toDay)`, and for stock metrics the sum of their changes
    /// before `fromDay` (`base`, with `day` empty); by `by`'s value when given.
    public func days(
        _ metrics: [AnalyticsMetric],
        fromDay: String,
        toDay: String,
        filter: Filter,
        by: Dimension? = nil
    ) async throws -> (cells: [AnalyticsCell], base: [AnalyticsCell]) {
        let names = Array(Set(metrics.map(\.name))).sorted()
        let stock = Array(Set(metrics.filter(\.isStock).map(\.name))).sorted()
        guard !names.isEmpty else { return ([], []) }
        let part: SQLQueryString = by.map { "\(unsafeRaw: $0.column)" } ?? "''"
        return try await provider.withReader { db in
            func cell(_ row: any SQLRow, day: String?) throws -> AnalyticsCell? {
                guard let metric = AnalyticsMetric(name: try row.decode(column: "metric", as: String.self)) else { return nil }
                return AnalyticsCell(
                    day: try day ?? row.decode(column: "day", as: String.self),
                    metric: metric,
                    part: try row.decode(column: "part", as: String.self),
                    currency: try row.decode(column: "currency", as: String.self),
                    value: try row.decode(column: "total", as: Int64.self)
                )
            }
            let cells = try await db.raw(
                """
                SELECT day, metric, \(part) AS part, currency, CAST(SUM(value) AS BIGINT) AS total FROM analytics_days
                WHERE metric IN (\(binds: names)) AND day >= \(bind: fromDay) AND day < \(bind: toDay)\(filter.clause)
                GROUP BY day, metric, part, currency
                """
            ).all().compactMap { try cell($0, day: nil) }
            guard !stock.isEmpty else { return (cells, []) }
            let base = try await db.raw(
                """
                SELECT metric, \(part) AS part, currency, CAST(SUM(value) AS BIGINT) AS total FROM analytics_days
                WHERE metric IN (\(binds: stock)) AND day < \(bind: fromDay)\(filter.clause)
                GROUP BY metric, part, currency
                """
            ).all().compactMap { try cell($0, day: "") }
            return (cells, base)
        }
    }

    /// The cohort cells of the months `[fromMonth, toMonth)` (`YYYY-MM`).
    public func cohorts(fromMonth: String, toMonth: String, filter: Filter) async throws -> [(cohort: String, age: Int, cell: AnalyticsCell)] {
        try await provider.withReader { db in
            try await db.raw(
                """
                SELECT cohort, age, metric, currency, CAST(SUM(value) AS BIGINT) AS total FROM analytics_cohorts
                WHERE cohort >= \(bind: fromMonth) AND cohort < \(bind: toMonth)\(filter.clause)
                GROUP BY cohort, age, metric, currency
                """
            ).all().compactMap { row in
                guard let metric = AnalyticsMetric(name: try row.decode(column: "metric", as: String.self)) else { return nil }
                let cohort = try row.decode(column: "cohort", as: String.self)
                return (
                    cohort, Int(try row.decode(column: "age", as: Int64.self)),
                    AnalyticsCell(
                        day: cohort,
                        metric: metric,
                        part: "",
                        currency: try row.decode(column: "currency", as: String.self),
                        value: try row.decode(column: "total", as: Int64.self)
                    )
                )
            }
        }
    }

    /// The distinct values of each dimension the rollups hold (for the console's filters), at most `limit` each.
    public func dimensionValues(limit: Int = 200) async throws -> [Dimension: [String]] {
        try await provider.withReader { db in
            var values: [Dimension: [String]] = [:]
            for dimension in Dimension.allCases {
                values[dimension] = try await db.raw(
                    """
                    SELECT DISTINCT \(unsafeRaw: dimension.column) AS v FROM analytics_cohorts
                    WHERE age = 0 AND metric = 'subscribers' ORDER BY v LIMIT \(bind: limit)
                    """
                ).all().map { try $0.decode(column: "v", as: String.self) }
            }
            return values
        }
    }

    // MARK: - Exchange rates

    /// The rates kept for the days up to `toDay` (the latest before `fromDay` included, so the range's first days
    /// have one).
    public func exchangeRates(reportingCurrency: String, fromDay: String, toDay: String) async throws -> ExchangeRates {
        try await provider.withReader { db in
            let rows = try await db.raw(
                """
                SELECT day, currency, micros FROM exchange_rates r WHERE day < \(bind: toDay)
                    AND (day >= \(bind: fromDay) OR day = (SELECT MAX(day) FROM exchange_rates p WHERE p.currency = r.currency
                        AND p.day < \(bind: fromDay)))
                """
            ).all().map {
                (
                    day: try $0.decode(column: "day", as: String.self), currency: try $0.decode(column: "currency", as: String.self),
                    micros: try $0.decode(column: "micros", as: Int64.self)
                )
            }
            return ExchangeRates(reportingCurrency: reportingCurrency, rates: rows)
        }
    }

    /// Keeps rates (millionths of the reporting currency per unit), replacing a day's earlier rate for a currency.
    public func setExchangeRates(_ rates: [(day: String, currency: String, micros: Int64)]) async throws {
        guard !rates.isEmpty else { return }
        try await provider.withTransaction { db in
            for chunk in rates.chunked(300) {
                var insert = BulkInsert(
                    into: "exchange_rates",
                    columns: ["day", "currency", "micros"],
                    suffix: "ON CONFLICT (currency, day) DO UPDATE SET micros = excluded.micros"
                )
                var seen: Set<[String]> = []
                for rate in chunk.reversed() where seen.insert([rate.day, rate.currency]).inserted {
                    insert.values([rate.day, rate.currency, rate.micros])
                }
                try await insert.run(on: db)
            }
        }
    }

    // MARK: - Drill-down

    /// A subscription behind a chart's point.
    public struct Contributor: Sendable, Hashable {
        public var originalTransactionId: String
        public var userId: String?
        public var dimensions: SubscriptionRollup.Dimensions
        public var metric: AnalyticsMetric
        /// What it added to the point (a change for stock metrics: +1 joined, -1 left).
        public var value: Int64
    }

    /// The subscriptions whose cells make up `metrics` on `day` (for stock metrics, those whose level changed that
    /// day), at most `limit`: candidates are subscriptions with a period that began or ended that day, a refund that
    /// day, or an expiry message from that day on, each re-rolled from its current facts to keep only those that
    /// really add to the point.
    public func contributors(
        _ metrics: [AnalyticsMetric],
        day: String,
        filter: Filter,
        limit: Int = 200
    ) async throws -> [Contributor] {
        guard let start = AnalyticsDays.date(day) else { return [] }
        let from = start.addingTimeInterval(-1).millis
        let to = start.addingTimeInterval(86_400).millis
        let lifecycle = self.lifecycle
        let wanted = Set(metrics)
        return try await provider.withReader { db in
            var candidates: [String] = []
            var seen: Set<String> = []
            let queries: [SQLQueryString] = [
                """
                SELECT DISTINCT original_transaction_id AS id FROM store_transactions
                WHERE purchase_date >= \(bind: from) AND purchase_date < \(bind: to) AND product_kind = 'autoRenewable' LIMIT 5000
                """,
                """
                SELECT DISTINCT original_transaction_id AS id FROM revocations
                WHERE revoked_at >= \(bind: from) AND revoked_at < \(bind: to) AND product_kind = 'autoRenewable' LIMIT 5000
                """,
                """
                SELECT original_transaction_id AS id FROM subscriptions
                WHERE state IN ('active', 'grace_period', 'billing_retry', 'expired', 'revoked', 'refunded', 'paused')
                    AND expires_at >= \(bind: from) AND expires_at < \(bind: to) LIMIT 5000
                """,
            ]
            for query in queries {
                for row in try await db.raw(query).all() {
                    let id = try row.decode(column: "id", as: String.self)
                    if seen.insert(id).inserted { candidates.append(id) }
                }
            }
            var found: [Contributor] = []
            for chunk in candidates.chunked(300) {
                let facts = try await Self.facts(of: chunk, lifecycle: lifecycle, on: db)
                let users = Dictionary(
                    try await db.raw(
                        "SELECT original_transaction_id, user_id FROM transaction_owners WHERE original_transaction_id IN (\(binds: chunk))"
                    ).all().map {
                        (try $0.decode(column: "original_transaction_id", as: String.self), try $0.decode(column: "user_id", as: String.self))
                    },
                    uniquingKeysWith: { first, _ in first }
                )
                for id in chunk {
                    guard let rollup = facts[id] else { continue }
                    for (key, value) in rollup.cells.days where key.day == day && wanted.contains(key.metric) && filter.matches(key.dimensions) {
                        found.append(
                            Contributor(originalTransactionId: id, userId: users[id], dimensions: key.dimensions, metric: key.metric, value: value)
                        )
                    }
                }
                if found.count >= limit { break }
            }
            return Array(found.sorted { ($0.metric.name, $0.originalTransactionId) < ($1.metric.name, $1.originalTransactionId) }.prefix(limit))
        }
    }

    // MARK: - Facts

    /// Each subscription's facts as the ledger holds them now (absent: nothing to roll up — sandbox, shared, gone).
    static func facts(of originals: [String], lifecycle: LifecycleCounting, on db: any SQLDatabase) async throws -> [String: SubscriptionRollup] {
        guard !originals.isEmpty else { return [:] }
        var periods: [String: [SubscriptionRollup.Period]] = [:]
        var apps: [String: (String, Store)] = [:]
        var lastEnds: [String: Date] = [:]
        for row in try await db.raw(
            """
            SELECT t.original_transaction_id, t.bundle_id, t.store, t.product_id, t.purchase_date, t.expires_date, t.price,
                t.currency, t.storefront, t.offer_type, t.offer_id, t.offer_discount_type, t.ownership_type, t.revocation_type,
                t.revocation_percentage, r.revoked_at, r.kind AS revocation_kind
            FROM store_transactions t
            LEFT JOIN revocations r ON r.transaction_id = t.transaction_id AND r.status = 'revoked'
            WHERE t.original_transaction_id IN (\(binds: originals)) AND t.product_kind = 'autoRenewable'
                AND t.environment = 'Production'
            """
        ).all() {
            guard TransactionCommerce.isSale(ownershipType: try row.decode(column: "ownership_type", as: String?.self)),
                let expires = try row.decode(column: "expires_date", as: Int64?.self)
            else { continue }
            let original = try row.decode(column: "original_transaction_id", as: String.self)
            let price = min(max(try row.decode(column: "price", as: Int64?.self) ?? 0, 0), Proceeds.maxPrice)
            let revokedAt = try row.decode(column: "revoked_at", as: Int64?.self).map(Date.init(millis:))
            var share: Int?
            let revocationKind = try row.decode(column: "revocation_kind", as: String?.self)
            let revocationType = try row.decode(column: "revocation_type", as: String?.self)
            if revokedAt != nil, revocationKind == "refund" {
                share = 100_000
                if revocationType == "REFUND_PRORATED" {
                    share = min(max(try row.decode(column: "revocation_percentage", as: Int?.self) ?? 100_000, 0), 100_000)
                }
            }
            let discount = try row.decode(column: "offer_discount_type", as: String?.self)
            let period = SubscriptionRollup.Period(
                productId: try row.decode(column: "product_id", as: String.self),
                start: Date(millis: try row.decode(column: "purchase_date", as: Int64.self)),
                end: Date(millis: expires),
                price: price,
                currency: try row.decode(column: "currency", as: String?.self) ?? "",
                storefront: try row.decode(column: "storefront", as: String?.self) ?? "",
                offer: SubscriptionRollup.offerLabel(
                    type: try row.decode(column: "offer_type", as: Int?.self),
                    id: try row.decode(column: "offer_id", as: String?.self)
                ),
                trial: price == 0 || discount == "FREE_TRIAL",
                revokedAt: revokedAt,
                refundShare: share
            )
            periods[original, default: []].append(period)
            apps[original] = (
                try row.decode(column: "bundle_id", as: String.self),
                Store(rawValue: try row.decode(column: "store", as: String.self)) ?? .appStore
            )
            lastEnds[original] = max(lastEnds[original] ?? period.end, period.end)
        }
        guard !periods.isEmpty else { return [:] }
        let subscribed = Array(periods.keys)
        var churns: [String: [SubscriptionRollup.Churn]] = [:]
        // The stores' expiry messages (a partial index holds exactly these).
        for row in try await db.raw(
            """
            SELECT original_transaction_id, notification_type, subtype, signed_date FROM notifications
            WHERE original_transaction_id IN (\(binds: subscribed)) AND notification_type LIKE '%EXPIRED'
                AND (environment IS NULL OR environment = 'Production')
            """
        ).all() {
            guard let signed = try row.decode(column: "signed_date", as: Int64?.self) else { continue }
            let counted = lifecycle.count(
                try row.decode(column: "notification_type", as: String.self),
                try row.decode(column: "subtype", as: String?.self)
            )
            let involuntary: Bool
            switch counted {
            case .voluntaryChurn?: involuntary = false
            case .billingChurn?: involuntary = true
            default: continue
            }
            churns[try row.decode(column: "original_transaction_id", as: String.self), default: []]
                .append(.init(at: Date(millis: signed), involuntary: involuntary))
        }
        // A subscription the ledger holds as expired whose expiry no message told (Google's, or one learned from the
        // stores' APIs): it churned when its last period ended.
        for row in try await db.raw(
            """
            SELECT original_transaction_id, expiration_reason, expires_at FROM subscriptions
            WHERE original_transaction_id IN (\(binds: subscribed)) AND state = 'expired'
            """
        ).all() {
            let original = try row.decode(column: "original_transaction_id", as: String.self)
            guard let lastStart = periods[original]?.map(\.start).max(), let lastEnd = lastEnds[original] else { continue }
            if churns[original, default: []].contains(where: { $0.at >= lastStart }) { continue }
            let at = min(lastEnd, try row.decode(column: "expires_at", as: Int64?.self).map(Date.init(millis:)) ?? lastEnd)
            let reason = try row.decode(column: "expiration_reason", as: String?.self)
            churns[original, default: []].append(.init(at: max(at, lastStart), involuntary: reason == "BILLING_RETRY"))
        }
        var result: [String: SubscriptionRollup] = [:]
        for (original, list) in periods {
            guard let (app, store) = apps[original] else { continue }
            result[original] = SubscriptionRollup(app: app, store: store, periods: list, churns: churns[original] ?? [])
        }
        return result
    }

}

extension Array {
    /// Consecutive slices of at most `size` elements.
    func chunked(_ size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}
