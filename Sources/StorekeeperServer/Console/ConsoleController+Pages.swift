import AppStoreWire
import Foundation
import Hummingbird
import NIOCore
import StorekeeperAPI
import StorekeeperCore
import StorekeeperLedger
import StorekeeperServerAPI
import StorekeeperStorage

/// The console's pages and actions. Reads go to the stores; every action goes through the admin API's own
/// operation (same validation, same audit) as the signed-in operator, then into the operator log.
extension ConsoleController {
    // MARK: Overview

    /// The overview's figures that read a month of transactions: computed at most once a minute per process.
    struct OverviewFigures: Sendable {
        struct Currency: Sendable {
            var currency: String
            var units: Int64 = 0
            var gross: Int64 = 0
            var proceeds: Int64 = 0
            var refunded: Int64 = 0
            var net: Int64 = 0
        }
        var today = 0
        var month = 0
        var currencies: [Currency] = []
        var perDay: [(label: String, value: Int)] = []
        var activeSubscriptions: Int?
    }

    func overviewFigures(now: Date) async throws -> OverviewFigures {
        let today = Calendar.utc.startOfDay(for: now)
        let monthAgo = today.addingTimeInterval(-29 * 86_400)
        let tomorrow = today.addingTimeInterval(86_400)
        var figures = OverviewFigures()
        guard let store = api.revenue else { return figures }
        // The revenue report is production only: sandbox never counts as revenue.
        let (lines, _) = try await store.report(from: monthAgo, to: tomorrow, smallBusiness: api.smallBusinessProgram)
        let todayName = RevenueReportBuilder.day(today)
        figures.today = lines.filter { $0.day == todayName }.reduce(0) { $0 + $1.units }
        figures.month = lines.reduce(0) { $0 + $1.units }
        var byCurrency: [String: OverviewFigures.Currency] = [:]
        var perDay: [String: Int] = [:]
        for line in lines {
            var total = byCurrency[line.currency] ?? OverviewFigures.Currency(currency: line.currency)
            total.units += Int64(line.units)
            total.gross = Self.add(total.gross, line.gross)
            total.proceeds = Self.add(total.proceeds, line.proceeds)
            total.refunded = Self.add(total.refunded, line.refunds)
            total.net = Self.add(total.net, line.net)
            byCurrency[line.currency] = total
            perDay[line.day, default: 0] += line.units
        }
        figures.currencies = byCurrency.values.sorted { $0.currency < $1.currency }
        figures.perDay = (0..<30).map { offset in
            let day = RevenueReportBuilder.day(monthAgo.addingTimeInterval(Double(offset) * 86_400))
            return (String(day.suffix(5)), perDay[day] ?? 0)
        }
        // From the analytics' rollups, as the Analytics page's tile: counting it from the transactions took over a
        // minute with 100,000 subscriptions.
        if let analytics = api.analytics {
            _ = try await analytics.catchUp()
            let active = try await analytics.headline(day: todayName, filter: AnalyticsStore.Filter()).first { $0.0 == .activeSubscriptions }
            figures.activeSubscriptions = active.map { Int($0.1.series.first?.points.last?.value ?? 0) }
        }
        return figures
    }

    func overview(_ signedIn: Operator) async throws -> Response {
        let now = Date()
        let (figures, asOf) = try await cache.value("overview", now: now) { try await overviewFigures(now: now) }
        var tiles: [[String: Any]] = []
        var revenue: [[String: Any]] = []
        var chart = ""
        if api.revenue != nil {
            tiles.append(["label": "Purchases today", "value": String(figures.today), "note": "as of \(Self.time(asOf).suffix(8)) UTC"])
            tiles.append(["label": "Purchases, 30 days", "value": String(figures.month)])
            revenue = figures.currencies.map { total in
                [
                    "currency": total.currency, "units": String(total.units), "gross": Self.money(total.gross),
                    "proceeds": Self.money(total.proceeds),
                    "refunded": Self.money(total.refunded), "net": Self.money(total.net),
                ]
            }
            chart = Self.barChart(figures.perDay)
        }
        if let active = figures.activeSubscriptions { tiles.append(["label": "Active subscriptions", "value": String(active)]) }
        let snapshot = try await backlog.snapshot(now: now)
        let dead = snapshot.notifications["dead"] ?? 0
        tiles.append(["label": "Pending recovery", "value": String(snapshot.pendingRecovery), "warn": snapshot.pendingRecovery > 0])
        tiles.append(["label": "Dead letters", "value": String(dead), "warn": dead > 0])
        tiles.append(["label": "Notifications waiting", "value": String(snapshot.notifications["pending"] ?? 0)])
        tiles.append([
            "label": "Refund questions open", "value": String(snapshot.consumptionOpen),
            "note": "\(snapshot.consumptionOverdue) past Apple's 12 hours",
            "warn": snapshot.consumptionOverdue > 0,
        ])
        let actions = try await store.actions(limit: 20)
        return try render(
            "overview",
            title: "Overview",
            ["tiles": tiles, "revenue": revenue, "chart": chart, "actions": actions.map(Self.view)],
            signedIn: signedIn
        )
    }

    static func add(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }

    /// A bar chart as inline SVG, drawn on the server: numbers and labels only, nothing from a customer.
    static func barChart(_ bars: [(label: String, value: Int)]) -> String {
        let width = 600
        let height = 140
        let top = max(bars.map(\.value).max() ?? 0, 1)
        let step = Double(width) / Double(max(bars.count, 1))
        var svg = "<svg class=\"chart\" viewBox=\"0 0 \(width) \(height + 20)\" role=\"img\" aria-label=\"purchases per day\">"
        for (index, bar) in bars.enumerated() {
            let barHeight = Int(Double(height) * Double(bar.value) / Double(top))
            let x = Int(Double(index) * step)
            svg +=
                "<rect x=\"\(x + 1)\" y=\"\(height - barHeight)\" width=\"\(max(Int(step) - 2, 1))\" height=\"\(barHeight)\"><title>\(bar.value)</title></rect>"
            if index % 5 == 0 {
                // Labels are day numbers this function formats ("MM-DD"): safe to write as they are.
                svg += "<text x=\"\(x)\" y=\"\(height + 14)\">\(bar.label.filter { $0.isNumber || $0 == "-" })</text>"
            }
        }
        return svg + "</svg>"
    }

    static func view(_ action: ConsoleStore.Action) -> [String: Any] {
        [
            "at": time(action.createdAt), "operator": action.operatorName, "role": action.role, "action": action.action, "subject": action.subject,
            "detail": action.detail ?? "",
        ]
    }

    // MARK: Find

    func find(_ request: Request, _ signedIn: Operator) async throws -> Response {
        let query = (Self.formQuery(request, "q") ?? "").trimmingCharacters(in: .whitespaces)
        guard !query.isEmpty else { return try render("find", title: "Find a customer", ["searched": false], signedIn: signedIn) }
        guard query.utf8.count <= 200, !query.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            let values: [String: Any] = ["failure": "Search for at most 200 printable characters."]
            return try render("find", title: "Find a customer", status: .badRequest, values, signedIn: signedIn)
        }
        var matches = try await store.find(query)
        var failure: String?
        // The order id on Apple's e-mail receipt: Apple's Look Up Order ID names its transactions.
        if matches.isEmpty, query.count >= 8, query.count <= 40, query.allSatisfy({ $0.isLetter || $0.isNumber }) {
            do {
                for transactionId in try await lookUpOrder(query) {
                    matches += try await store.find(transactionId).map {
                        ConsoleStore.Match(user: $0.user, via: "Apple order id", detail: "transaction \(transactionId): \($0.detail)")
                    }
                }
            } catch {
                failure = "Apple's order look-up failed: \(Self.message(of: error))"
            }
        }
        return try render(
            "find",
            title: "Find a customer",
            [
                "query": query, "searched": true, "failure": failure as Any,
                "matches": matches.map { ["user": $0.user, "link": Self.link($0.user), "via": $0.via, "detail": $0.detail] },
            ],
            signedIn: signedIn
        )
    }

    /// The transactions of Apple's order `orderId`, asked of each app's App Store Server API (production, then
    /// sandbox) and verified; a failure is thrown only when no environment answered.
    func lookUpOrder(_ orderId: String) async throws -> [String] {
        var ids: [String] = []
        var failure: (any Error)?
        for app in api.apps.apps {
            for environment in ["Production", "Sandbox"] {
                guard let client = app.serverAPI(for: environment) else { continue }
                do {
                    let answer = try await client.lookUpOrderId(orderId: orderId)
                    for signed in answer.signedTransactions ?? [] {
                        let transaction = try await app.verifier.verifyTransaction(signed)
                        if let id = transaction.transactionId { ids.append(id) }
                    }
                } catch {
                    failure = error
                }
            }
        }
        if ids.isEmpty, let failure { throw failure }
        return ids
    }

    // MARK: Customer

    func customer(_ id: String, _ request: Request, _ signedIn: Operator, flash: String? = nil, failure: String? = nil) async throws -> Response {
        guard let user = UserID.any(id) else {
            return try problem("No such customer", .notFound, "\(id) is not a user id.", signedIn: signedIn)
        }
        let atText = Self.formQuery(request, "at") ?? ""
        var moment = Date()
        var atLabel: String?
        if !atText.isEmpty {
            guard let parsed = Self.moment(atText) else {
                return try problem(
                    "Not a moment",
                    .badRequest,
                    "“\(atText.prefix(40))” is not a date and time (YYYY-MM-DDTHH:MM).",
                    signedIn: signedIn
                )
            }
            moment = parsed
            atLabel = Self.time(parsed)
        }
        let beforeText = Self.formQuery(request, "before") ?? ""
        var before: Int64?
        if !beforeText.isEmpty {
            guard let id = Int64(beforeText), id > 0 else {
                return try problem("Not a page", .badRequest, "“\(beforeText.prefix(40))” is not a timeline position.", signedIn: signedIn)
            }
            before = id
        }
        let state = try await api.userState(user, at: moment)
        let seats = try await api.teams.rows(of: user)
        // The newest entries first, a page at a time backwards; orders and wallet lines are shown in the same span of
        // time as the page's audit entries, so no row is on two pages or on none.
        let page = try await api.audit.latestEntries(for: user, before: before, limit: Self.timelinePage + 1)
        let audit = Array(page.prefix(Self.timelinePage))
        let older = page.count > Self.timelinePage ? audit.last : nil
        let from = older?.entry.createdAt ?? .distantPast
        var until = Date.distantFuture
        if let before, let previous = try await api.audit.latestEntries(for: user, before: before + 1, limit: 1).first, previous.id == before {
            until = previous.entry.createdAt
        }
        func onThisPage(_ date: Date) -> Bool { date >= from && date < until }
        let wallet = try await store.walletEntries(of: user.rawValue).filter { onThisPage($0.createdAt) }
        var timeline: [(at: Date, row: [String: Any])] = []
        for (_, entry) in audit {
            timeline.append(
                (
                    entry.createdAt,
                    [
                        "at": Self.time(entry.createdAt), "what": entry.action.rawValue, "subject": entry.subject,
                        "amount": entry.amount.map(String.init) ?? "", "cause": entry.cause.rawValue, "detail": entry.detail ?? "", "kind": "audit",
                    ]
                )
            )
        }
        // Orders are on the timeline through their audit entries (`order.created`, `order.delivered`, …); the
        // Orders table below shows where each stands now.
        for line in wallet where !audit.contains(where: { $0.entry.cause.rawValue == line.cause }) {
            timeline.append(
                (
                    line.createdAt,
                    [
                        "at": Self.time(line.createdAt), "what": "wallet \(line.amount >= 0 ? "credited" : "debited")", "subject": line.currency,
                        "amount": String(line.amount), "cause": line.cause, "detail": line.reason ?? "", "kind": "wallet",
                    ]
                )
            )
        }
        timeline.sort { $0.at > $1.at }
        for index in timeline.indices {
            // A change Apple's notification made links to the notification's body as received.
            if let cause = timeline[index].row["cause"] as? String, cause.hasPrefix("notification:") {
                timeline[index].row["causeLink"] = "/admin/notifications/" + Self.link(String(cause.dropFirst("notification:".count)))
            }
        }
        let signals = try await risk.signals(of: user.rawValue)
        let values: [String: Any] = [
            "link": Self.link(user.rawValue),
            "atInput": atLabel.map { String($0.prefix(19)) } ?? "",
            "atLabel": atLabel as Any,
            "canAct": signedIn.holds(.usersWrite),
            "csrf": signedIn.session.csrf,
            "idempotencyKey": "console-" + Self.randomToken().prefix(24),
            "flash": flash as Any,
            "failure": failure as Any,
            "entitlements": state.entitlements.map { entitlement -> [String: Any] in
                var row: [String: Any] = ["entitlement": entitlement.entitlement, "active": entitlement.active ? "yes" : "no"]
                row["until"] = Self.time(entitlement.expiresAt)
                row["product"] = entitlement.sources.map { $0.seatClaimId == nil ? $0.productId : "\($0.productId) (a seat)" }
                    .joined(separator: ", ")
                row["canRevoke"] = entitlement.active && signedIn.holds(.usersWrite) && atLabel == nil
                return row
            },
            "catalogEntitlements": Array(Set(api.catalog.catalog.products.compactMap(\.entitlement))).sorted(),
            "hasSeats": !seats.isEmpty,
            "seats": seats.map { seat -> [String: Any] in
                let purchaser = seat.purchaser == user
                return [
                    "role": purchaser ? "purchaser" : "member", "original": seat.originalTransactionId,
                    "other": purchaser ? (seat.member?.rawValue ?? "(invitation open)") : seat.purchaser.rawValue,
                    "otherLink": Self.link(purchaser ? (seat.member?.rawValue ?? "") : seat.purchaser.rawValue),
                    "hasOther": !purchaser || seat.member != nil, "status": seat.status.rawValue, "claim": seat.seatClaimId ?? "",
                    "claimed": Self.time(seat.claimedAt), "ended": seat.releasedAt.map { "\(Self.time($0)) (\(seat.releaseReason ?? ""))" } ?? "",
                ]
            },
            "wallet": state.wallet.additionalProperties.sorted { $0.key < $1.key }.map { ["currency": $0.key, "balance": String($0.value)] },
            "subscriptions": state.subscriptions.map { subscription -> [String: Any] in
                var row: [String: Any] = ["original": subscription.originalTransactionId, "product": subscription.productId]
                row["state"] = subscription.state.rawValue
                row["expires"] = Self.time(subscription.expiresAt)
                row["autoRenew"] = subscription.autoRenew.map { $0 ? "on" : "off" } ?? ""
                row["originalLink"] = Self.link(subscription.originalTransactionId)
                row["canExtend"] = signedIn.holds(.usersWrite) && subscription.state.rawValue != "expired"
                return row
            },
            "orders": state.orders.map {
                [
                    "id": $0.orderId, "product": $0.productId, "status": $0.status.rawValue, "token": $0.appAccountToken,
                    "created": Self.time($0.createdAt),
                    "transaction": $0.transactionId ?? "",
                ]
            },
            "transactions": state.transactions.map {
                [
                    "id": $0.transactionId, "original": $0.originalTransactionId, "product": $0.productId, "purchased": Self.time($0.purchaseDate),
                    "expires": Self.time($0.expiresDate), "environment": $0.environment,
                    "install": $0.appTransactionId ?? "",
                ]
            },
            "timeline": timeline.map(\.row),
            "timelineOlder": older.map {
                "/admin/customers/\(Self.link(user.rawValue))?before=\($0.id)\(atLabel == nil ? "" : "&at=" + Self.link(atText))"
            }
                as Any,
            "timelineNewest": (before == nil ? nil : "/admin/customers/\(Self.link(user.rawValue))") as String? as Any,
            "riskFlags": signals.flags(riskPolicy),
            "riskRows": Self.riskRows(signals),
        ]
        return try render("customer", title: "Customer \(user.rawValue)", values, signedIn: signedIn)
    }

    /// Audit entries per timeline page.
    static let timelinePage = 200

    /// `YYYY-MM-DDTHH:MM[:SS]` (a browser's datetime-local, taken as UTC), or nil.
    static func moment(_ text: String) -> Date? {
        guard text.utf8.count <= 25 else { return nil }
        for suffix in ["Z", ":00Z"] {
            if let date = try? Date(text + suffix, strategy: .iso8601) { return date }
        }
        return nil
    }

    func adjustWallet(_ id: String, _ form: [String: String], _ signedIn: Operator) async throws -> Response {
        guard let amount = Int64(form["amount"] ?? "") else {
            return try await customerAfterAction(id, signedIn, failure: "The amount must be a whole number of coins.")
        }
        let reason = form["reason"] ?? ""
        let key = form["idempotencyKey"] ?? ""
        do {
            let output = try await logged(signedIn, "wallet.adjusted", subject: id, detail: "\(amount) coins: \(reason)") {
                try await asOperator(signedIn) {
                    try await api.adminAdjustWallet(
                        .init(path: .init(id: id), body: .json(.init(amount: amount, idempotencyKey: key, reason: reason)))
                    )
                }
            }
            let balance = try output.ok.body.json
            return try await customerAfterAction(
                id,
                signedIn,
                flash: balance.repeated == true
                    ? "Already applied; the balance is \(balance.balance)." : "Adjusted; the balance is \(balance.balance)."
            )
        } catch {
            return try await customerAfterAction(id, signedIn, failure: Self.message(of: error))
        }
    }

    /// Grants an entitlement by hand (a goodwill unlock, a pass while Apple sorts out a purchase), for good or for a
    /// number of days.
    func grantEntitlement(_ id: String, _ form: [String: String], _ signedIn: Operator) async throws -> Response {
        guard let user = UserID.any(id) else { return try problem("No such customer", .notFound, "\(id) is not a user id.", signedIn: signedIn) }
        let entitlement = (form["entitlement"] ?? "").trimmingCharacters(in: .whitespaces)
        let reason = (form["reason"] ?? "").trimmingCharacters(in: .whitespaces)
        guard !entitlement.isEmpty, entitlement.utf8.count <= 200, !entitlement.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            return try await customerAfterAction(id, signedIn, failure: "Name the entitlement (at most 200 printable characters).")
        }
        guard !reason.isEmpty, reason.utf8.count <= 500, !reason.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            return try await customerAfterAction(id, signedIn, failure: "Give a reason (at most 500 printable characters).")
        }
        var until: Date?
        if let text = form["days"], !text.isEmpty {
            guard let days = Int(text), (1...3_650).contains(days) else {
                return try await customerAfterAction(id, signedIn, failure: "Days must be a whole number from 1 to 3650, or empty for good.")
            }
            until = Date().addingTimeInterval(Double(days) * 86_400)
        }
        do {
            _ = try await logged(signedIn, "entitlement.granted", subject: id, detail: "\(entitlement) until \(Self.time(until)): \(reason)") {
                try await api.ledger.grantEntitlement(user: user, entitlement: entitlement, until: until, admin: signedIn.name, reason: reason)
            }
            return try await customerAfterAction(
                id,
                signedIn,
                flash: "Granted \(entitlement)\(until.map { " until \(Self.time($0)) UTC" } ?? " for good")."
            )
        } catch {
            return try await customerAfterAction(id, signedIn, failure: Self.message(of: error))
        }
    }

    /// Revokes an entitlement now, whatever granted it.
    func revokeEntitlement(_ id: String, _ form: [String: String], _ signedIn: Operator) async throws -> Response {
        guard let user = UserID.any(id) else { return try problem("No such customer", .notFound, "\(id) is not a user id.", signedIn: signedIn) }
        let entitlement = form["entitlement"] ?? ""
        let reason = (form["reason"] ?? "").trimmingCharacters(in: .whitespaces)
        guard !entitlement.isEmpty, entitlement.utf8.count <= 200 else {
            return try await customerAfterAction(id, signedIn, failure: "Name the entitlement.")
        }
        guard !reason.isEmpty, reason.utf8.count <= 500, !reason.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            return try await customerAfterAction(id, signedIn, failure: "Give a reason (at most 500 printable characters).")
        }
        do {
            let revoked = try await logged(signedIn, "entitlement.revoked", subject: id, detail: "\(entitlement): \(reason)") {
                try await api.ledger.revokeEntitlement(user: user, entitlement: entitlement, admin: signedIn.name, reason: reason)
            }
            return try await customerAfterAction(id, signedIn, flash: "Revoked \(entitlement) (\(revoked) grant(s)).")
        } catch {
            return try await customerAfterAction(id, signedIn, failure: Self.message(of: error))
        }
    }

    /// Asks Apple to push a subscription's renewal date back (Extend a Subscription Renewal Date); Apple's
    /// `RENEWAL_EXTENDED` notification then extends the entitlement, audited as any notification is.
    func extendRenewal(_ id: String, _ original: String, _ form: [String: String], _ signedIn: Operator) async throws -> Response {
        guard let days = Int32(form["days"] ?? ""), (1...90).contains(days) else {
            return try await customerAfterAction(id, signedIn, failure: "Apple extends by 1 to 90 days.")
        }
        guard let code = Int32(form["reason"] ?? ""), ExtendReasonCode.knownValues.contains(ExtendReasonCode(rawValue: code)) else {
            return try await customerAfterAction(id, signedIn, failure: "Choose one of Apple's reasons.")
        }
        guard let record = try await api.subscriptions.find(original), record.user?.rawValue == id else {
            return try await customerAfterAction(id, signedIn, failure: "\(original) is not one of this customer's subscriptions.")
        }
        guard let client = api.apps.app(bundleId: record.bundleId)?.serverAPI(for: record.environment) else {
            return try await customerAfterAction(id, signedIn, failure: "No App Store Server API key for \(record.bundleId) (\(record.environment)).")
        }
        let request = ExtendRenewalDateRequest(
            extendByDays: days,
            extendReasonCode: ExtendReasonCode(rawValue: code),
            requestIdentifier: UUID().uuidString.lowercased()
        )
        do {
            let answer = try await client.extendSubscriptionRenewalDate(originalTransactionId: original, request: request)
            guard answer.success == true else {
                return try await customerAfterAction(id, signedIn, failure: "Apple did not extend \(original).")
            }
            // Apple changed the subscription, not Storekeeper: the line is the only write.
            try await log(signedIn, "subscription.extension_requested", subject: original, detail: "\(days) day(s), reason \(code), for \(id)")
            return try await customerAfterAction(
                id,
                signedIn,
                flash: "Apple extended \(original) by \(days) day(s); the entitlement follows with Apple's RENEWAL_EXTENDED."
            )
        } catch {
            return try await customerAfterAction(id, signedIn, failure: "Apple refused the extension: \(Self.message(of: error))")
        }
    }

    /// Re-runs catch-up for this customer only (``CustomerCatchUp``): Apple's transaction history for each of the
    /// customer's Apple accounts, and each subscription's status.
    func catchUp(_ id: String, _ signedIn: Operator) async throws -> Response {
        let user = UserID(rawValue: id)
        let catchUp = CustomerCatchUp(
            apps: api.apps,
            purchases: api.purchases,
            ledger: api.ledger,
            subscriptions: api.subscriptions,
            sweep: api.jobs.sweep,
            store: store,
            metrics: api.metrics,
            logger: logger
        )
        do {
            let summary = try await catchUp.run(for: user)
            try await log(signedIn, "customer.catch_up", subject: id, detail: summary.text)
            return try await customerAfterAction(id, signedIn, flash: "Catch-up done: \(summary.text).")
        } catch {
            return try await customerAfterAction(id, signedIn, failure: "Catch-up stopped: \(Self.message(of: error))")
        }
    }

    func customerAfterAction(_ id: String, _ signedIn: Operator, flash: String? = nil, failure: String? = nil) async throws -> Response {
        try await customer(
            id,
            Request(head: .init(method: .get, scheme: nil, authority: nil, path: "/admin"), body: .init(buffer: ByteBuffer())),
            signedIn,
            flash: flash,
            failure: failure
        )
    }

    static func riskRows(_ signals: RiskSignals) -> [[String: String]] {
        [
            ["label": "Paid purchases", "value": String(signals.paidPurchases)],
            ["label": "Refunds", "value": String(signals.refunds)],
            ["label": "Refund rate (‰)", "value": String(signals.refundRatePermille)],
            ["label": "Refunded", "value": refunded(signals)],
            ["label": "Coins refunded after being spent: forgiven", "value": String(signals.coinsForgiven)],
            ["label": "Coins refunded after being spent: owed (negative balance)", "value": String(signals.debt)],
            ["label": "Introductory offers taken again (other Apple IDs)", "value": String(signals.introductoryOfferRepeats)],
            ["label": "Other users on the same app install", "value": String(signals.sharedInstallUsers)],
            ["label": "Purchases replayed from other accounts", "value": String(signals.replaysRefused)],
            ["label": "Guest devices merged in", "value": String(signals.mergedGuests)],
        ]
    }

    static func refunded(_ signals: RiskSignals) -> String {
        signals.refundedAmount.sorted { $0.key < $1.key }.map { "\(money($0.value)) \($0.key)" }.joined(separator: ", ")
    }

    // MARK: Customers to review

    func review(_ signedIn: Operator) async throws -> Response {
        let (flagged, asOf) = try await cache.value("review", now: Date()) { try await risk.review(riskPolicy) }
        let values: [String: Any] = [
            "asOf": Self.time(asOf),
            "refundsToReview": riskPolicy.refundsToReview, "refundRate": riskPolicy.refundRatePermille,
            "mergedGuests": riskPolicy.mergedGuestsToReview,
            "decline": riskPolicy.declineRefundsFrom as Any,
            "customers": flagged.map { signals -> [String: Any] in
                var row: [String: Any] = [
                    "user": signals.user, "link": Self.link(signals.user), "flags": signals.flags(riskPolicy).joined(separator: ", "),
                ]
                row["refunds"] = signals.refunds
                row["rate"] = signals.refundRatePermille
                row["refunded"] = Self.refunded(signals)
                row["forgiven"] = signals.coinsForgiven + signals.debt
                row["intro"] = signals.introductoryOfferRepeats
                row["shared"] = signals.sharedInstallUsers
                row["replays"] = signals.replaysRefused
                row["merged"] = signals.mergedGuests
                return row
            },
        ]
        return try render("review", title: "Customers to review", values, signedIn: signedIn)
    }

    // MARK: Notifications

    func notification(_ id: String, _ signedIn: Operator) async throws -> Response {
        guard let item = try await api.inbox.find(id) else {
            return try problem("No such notification", .notFound, "No notification \(id) is stored.", signedIn: signedIn)
        }
        var values: [String: Any] = ["type": [item.received.notificationType, item.received.subtype].compactMap { $0 }.joined(separator: " / ")]
        values["status"] = item.status
        values["attempts"] = item.attempts
        values["error"] = item.lastError ?? ""
        values["original"] = item.received.originalTransactionId ?? ""
        values["environment"] = item.received.environment ?? ""
        values["signed"] = Self.time(item.received.signedDate)
        values["received"] = Self.time(item.receivedAt)
        values["body"] = item.received.body
        return try render("notification", title: "Notification \(id)", values, signedIn: signedIn)
    }

    func notifications(_ request: Request, _ signedIn: Operator, flash: String? = nil, failure: String? = nil) async throws -> Response {
        func field(_ name: String) -> String? {
            guard let value = Self.formQuery(request, name)?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
            return value
        }
        let status = field("status") ?? "dead"
        guard ["pending", "processed", "dead"].contains(status) else {
            return try problem("Unknown filter", .badRequest, "Filter by pending, processed or dead.", signedIn: signedIn)
        }
        var filter = NotificationInbox.Filter(status: status)
        if let type = field("type") {
            guard type.utf8.count <= 64, type.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || $0 == UInt8(ascii: "_") })
            else {
                return try problem(
                    "Unknown filter",
                    .badRequest,
                    "A notification type is Apple's name for it, such as DID_RENEW.",
                    signedIn: signedIn
                )
            }
            filter.type = type
        }
        for (name, isEnd) in [("from", false), ("to", true)] {
            guard let text = field(name) else { continue }
            guard let day = Self.day(text) else {
                return try problem("Unknown filter", .badRequest, "Dates are days written 2026-11-24 (UTC).", signedIn: signedIn)
            }
            // `to` names the last day shown, so the bound is the next midnight.
            if isEnd { filter.to = day.addingTimeInterval(86_400) } else { filter.from = day }
        }
        if let original = field("original") {
            guard original.utf8.count <= 64 else {
                return try problem("Unknown filter", .badRequest, "That is not an original transaction id.", signedIn: signedIn)
            }
            filter.originalTransactionId = original
        }
        let counts = try await api.inbox.counts()
        let items = try await api.inbox.list(filter, limit: 200)
        let values: [String: Any] = [
            "flash": flash as Any,
            "failure": failure as Any,
            "filters": ["dead", "pending", "processed"].map {
                ["value": $0, "label": $0.capitalized, "count": counts[$0] ?? 0, "current": $0 == status]
            },
            "status": status,
            "type": filter.type ?? "",
            "from": field("from") ?? "",
            "to": field("to") ?? "",
            "original": filter.originalTransactionId ?? "",
            "types": (NotificationTypeV2.knownValues.map(\.rawValue) + NotificationTypeV1.knownValues.map(\.rawValue)).sorted(),
            "notifications": items.map { item in row(item, signedIn) },
        ]
        return try render("notifications", title: "Notifications", values, signedIn: signedIn)
    }

    /// A `yyyy-MM-dd` day at UTC midnight, between 2000 and 2100.
    static func day(_ text: String) -> Date? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]), (2000...2100).contains(year)
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: year, month: month, day: day)
        guard components.isValidDate(in: calendar) else { return nil }
        return calendar.date(from: components)
    }

    func row(_ item: NotificationInbox.Stored, _ signedIn: Operator) -> [String: Any] {
        let type = [item.received.notificationType, item.received.subtype].compactMap { $0 }.joined(separator: " / ")
        var row: [String: Any] = ["id": item.received.id, "link": Self.link(item.received.id), "received": Self.time(item.receivedAt), "type": type]
        row["status"] = item.status
        row["attempts"] = item.attempts
        row["error"] = item.lastError ?? ""
        row["original"] = item.received.originalTransactionId ?? ""
        row["retryable"] = item.status == "dead" || item.status == "pending"
        row["canAct"] = signedIn.holds(.notificationsWrite)
        row["csrf"] = signedIn.session.csrf
        return row
    }

    func retry(_ id: String, _ signedIn: Operator) async throws -> Response {
        let request = Request(
            head: .init(method: .get, scheme: nil, authority: nil, path: "/admin/notifications?status=dead"),
            body: .init(buffer: ByteBuffer())
        )
        do {
            _ = try await logged(signedIn, "notification.retried", subject: id, detail: nil) {
                try await asOperator(signedIn) { try await api.adminRetryNotification(.init(path: .init(id: id))) }
            }
            return try await notifications(request, signedIn, flash: "Notification \(id) is queued again.")
        } catch {
            return try await notifications(request, signedIn, failure: Self.message(of: error))
        }
    }

    // MARK: Pending purchases

    func pending(_ signedIn: Operator, flash: String?, failure: String? = nil) async throws -> Response {
        let items = try await api.pendingTransactions.list(limit: 500)
        let values: [String: Any] = [
            "flash": flash as Any,
            "failure": failure as Any,
            "items": items.map {
                [
                    "id": $0.transactionId, "link": Self.link($0.transactionId), "product": $0.productId, "environment": $0.environment,
                    "reason": $0.reason, "parked": Self.time($0.createdAt), "canAct": signedIn.holds(.usersWrite), "csrf": signedIn.session.csrf,
                ]
            },
        ]
        return try render("pending", title: "Pending purchases", values, signedIn: signedIn)
    }

    func assign(_ transaction: String, _ form: [String: String], _ signedIn: Operator) async throws -> Response {
        let user = (form["userId"] ?? "").trimmingCharacters(in: .whitespaces)
        let reason = (form["reason"] ?? "").isEmpty ? "assigned in the console" : form["reason"]!
        do {
            _ = try await logged(signedIn, "pending.assigned", subject: transaction, detail: "to \(user): \(reason)") {
                try await asOperator(signedIn) {
                    try await api.adminAssignPending(.init(path: .init(transaction: transaction), body: .json(.init(userId: user, reason: reason))))
                }
            }
            return try await pending(signedIn, flash: "Transaction \(transaction) was delivered to \(user).")
        } catch {
            return try await pending(signedIn, flash: nil, failure: Self.message(of: error))
        }
    }

    // MARK: Catalog

    func catalog(_ signedIn: Operator, flash: String?, failure: String? = nil) throws -> Response {
        let products = api.catalog.catalog.products.sorted { $0.id < $1.id }
        let campaigns = api.catalog.catalog.campaigns.sorted { $0.id < $1.id }.map { campaign -> [String: Any] in
            var row: [String: Any] = ["id": campaign.id, "link": Self.link(campaign.id), "products": campaign.productIds.joined(separator: ", ")]
            row["active"] = campaign.active
            row["canEdit"] = signedIn.holds(.catalogWrite)
            row["csrf"] = signedIn.session.csrf
            row["variants"] = campaign.variants.enumerated().map { index, variant -> [String: Any] in
                ["index": index, "name": variant.name, "offer": variant.offerId ?? "no offer (control)", "weight": variant.weight]
            }
            return row
        }
        return try render(
            "catalog",
            title: "Catalog",
            [
                "flash": flash as Any,
                "failure": failure as Any,
                "campaigns": campaigns,
                "products": products.map { product -> [String: Any] in
                    let grants = product.coins.map { "\($0) coins" } ?? product.entitlement ?? ""
                    return [
                        "id": product.id, "link": Self.link(product.id), "kind": product.kind.rawValue, "grants": grants,
                        "onSale": product.onSale ? "yes" : "no",
                        "canEdit": signedIn.holds(.catalogWrite),
                    ]
                },
            ],
            signedIn: signedIn
        )
    }

    func product(_ id: String, _ signedIn: Operator, failure: String?) throws -> Response {
        guard let product = api.catalog.catalog.product(id) else {
            return try problem("No such product", .notFound, "The catalog has no product \(id).", signedIn: signedIn)
        }
        return try render(
            "product",
            title: "Edit \(product.id)",
            [
                "id": product.id, "link": Self.link(product.id), "kind": product.kind.rawValue, "entitlement": product.entitlement ?? "",
                "coins": product.coins.map(String.init) ?? "", "subscriptionGroup": product.subscriptionGroup ?? "",
                "level": product.level.map(String.init) ?? "",
                "duration": product.duration?.description ?? "", "appleId": product.appleId.map(String.init) ?? "", "onSale": product.onSale,
                "csrf": signedIn.session.csrf, "failure": failure as Any,
            ],
            signedIn: signedIn
        )
    }

    func saveProduct(_ id: String, _ form: [String: String], _ signedIn: Operator) async throws -> Response {
        guard var product = api.catalog.catalog.product(id) else {
            return try problem("No such product", .notFound, "The catalog has no product \(id).", signedIn: signedIn)
        }
        func text(_ name: String) -> String? {
            let value = (form[name] ?? "").trimmingCharacters(in: .whitespaces)
            return value.isEmpty ? nil : value
        }
        func number<T: FixedWidthInteger>(_ name: String, _ range: ClosedRange<T>) throws -> T? {
            guard let value = text(name) else { return nil }
            guard let parsed = T(value), range.contains(parsed) else { throw Refusal.badForm("\(name) must be a whole number in \(range).") }
            return parsed
        }
        do {
            product.entitlement = text("entitlement")
            product.coins = try number("coins", 1...CatalogProduct.maximumCoins)
            product.subscriptionGroup = text("subscriptionGroup")
            product.level = try number("level", 1...1_000)
            product.appleId = try number("appleId", 1...999_999_999_999)
            if let duration = text("duration") {
                guard let parsed = CatalogDuration(iso8601: duration) else { throw Refusal.badForm("duration must be like P1M, P1W or P1Y.") }
                product.duration = parsed
            } else {
                product.duration = nil
            }
            product.onSale = form["onSale"] == "true"
            let saved = product
            try await logged(signedIn, "catalog.product_saved", subject: id, detail: "on sale: \(product.onSale)") {
                try await api.catalog.save(saved, with: api.ledger)
            }
            return try catalog(signedIn, flash: "Saved \(id).")
        } catch Refusal.badForm(let message) {
            return try self.product(id, signedIn, failure: message)
        } catch {
            return try self.product(id, signedIn, failure: Self.message(of: error))
        }
    }

    /// Turns a campaign on or off and sets its variants' weights (the A/B split); the catalog validates the result.
    func saveCampaign(_ id: String, _ form: [String: String], _ signedIn: Operator) async throws -> Response {
        guard var campaign = api.catalog.catalog.campaigns.first(where: { $0.id == id }) else {
            return try problem("No such campaign", .notFound, "The catalog has no campaign \(id).", signedIn: signedIn)
        }
        for index in campaign.variants.indices {
            guard let weight = Int(form["weight\(index)"] ?? ""), (0...1_000_000).contains(weight) else {
                return try catalog(signedIn, flash: nil, failure: "Each weight must be a whole number from 0 to 1000000.")
            }
            campaign.variants[index].weight = weight
        }
        campaign.active = form["active"] == "true"
        do {
            let split = campaign.variants.map { "\($0.name) \($0.weight)" }.joined(separator: ", ")
            let saved = campaign
            try await logged(signedIn, "catalog.campaign_saved", subject: id, detail: "active: \(campaign.active); \(split)") {
                try await api.catalog.save(saved, with: api.ledger)
            }
            return try catalog(signedIn, flash: "Saved campaign \(id).")
        } catch {
            return try catalog(signedIn, flash: nil, failure: Self.message(of: error))
        }
    }

    // MARK: Jobs

    static let jobNames = [
        "process-notifications", "catch-up", "renewal-sweep", "consumption-responder", "business-metrics", "reconciliation", "finish-transactions",
        "set-account-tokens", "app-transactions", "expire-guests", "acknowledge-purchases", "play-catch-up", "play-reconciliation",
        "analytics-rollup",
    ]

    func jobs(_ signedIn: Operator, flash: String?, failure: String? = nil) async throws -> Response {
        let jobs = api.jobs
        let configured: [String: Bool] = [
            "process-notifications": jobs.processor != nil, "catch-up": jobs.catchUp != nil, "renewal-sweep": jobs.sweep != nil,
            "consumption-responder": jobs.responder != nil, "business-metrics": jobs.businessMetrics != nil, "reconciliation": jobs.reconciler != nil,
            "finish-transactions": jobs.finisher != nil, "set-account-tokens": jobs.tokenSetter != nil,
            "app-transactions": jobs.installs != nil, "expire-guests": jobs.guestExpiry != nil,
            "acknowledge-purchases": jobs.acknowledger != nil, "play-catch-up": jobs.playCatchUp != nil,
            "play-reconciliation": jobs.playReconciler != nil, "analytics-rollup": jobs.analyticsRollup != nil,
        ]
        var days: [[String: Any]] = []
        if let reconciliations = api.reconciliations {
            let today = Date()
            let rows = try await reconciliations.days(
                from: RevenueReportBuilder.day(today.addingTimeInterval(-35 * 86_400)),
                to: RevenueReportBuilder.day(today)
            )
            days = rows.reversed().map {
                [
                    "day": $0.day, "status": $0.status, "findings": $0.findings, "ran": Self.time($0.ranAt), "runs": $0.runs,
                    "message": $0.message ?? "",
                ]
            }
        }
        return try render(
            "jobs",
            title: "Jobs",
            [
                "flash": flash as Any, "failure": failure as Any, "days": days,
                "jobs": Self.jobNames.map { name -> [String: Any] in
                    let log = api.metrics.runLog.entry(name.replacingOccurrences(of: "-", with: "_"))
                    var row: [String: Any] = ["name": name, "configured": configured[name] == true ? "yes" : "no"]
                    row["canRun"] = signedIn.holds(.jobsRun) && configured[name] == true
                    row["csrf"] = signedIn.session.csrf
                    row["lastRun"] = Self.time(log?.lastRun)
                    row["items"] = log?.lastItems.map(String.init) ?? ""
                    row["runs"] = log.map { String($0.runs) } ?? "0"
                    row["error"] = log?.lastError.map { "\(Self.time(log?.lastErrorAt)): \($0)" } ?? ""
                    return row
                },
            ],
            signedIn: signedIn
        )
    }

    // MARK: Webhooks

    func webhooks(_ signedIn: Operator, flash: String?, failure: String? = nil) async throws -> Response {
        let listed = try await asOperator(signedIn) { try await api.adminListWebhooks(.init()) }.ok.body.json.webhooks
        return try render(
            "webhooks",
            title: "Webhooks",
            [
                "flash": flash as Any, "failure": failure as Any,
                "endpoints": listed.map { endpoint -> [String: Any] in
                    [
                        "name": endpoint.name, "kind": endpoint.kind.rawValue, "url": endpoint.url,
                        "types": endpoint.eventTypes.isEmpty ? "all" : endpoint.eventTypes.joined(separator: ", "),
                        "state": endpoint.paused ? "paused" : "running", "pending": endpoint.pending, "dead": endpoint.dead,
                        "oldest": Self.time(endpoint.oldestPendingAt),
                        "canControl": signedIn.holds(.webhooksWrite), "csrf": signedIn.session.csrf,
                        "toggle": endpoint.paused ? "resume" : "pause", "toggleLabel": endpoint.paused ? "Resume" : "Pause",
                        "hasDead": endpoint.dead > 0, "replayable": endpoint.kind == .events,
                    ]
                },
            ],
            signedIn: signedIn
        )
    }

    func controlWebhook(_ name: String, _ action: String, _ form: [String: String], _ signedIn: Operator) async throws -> Response {
        guard let chosen = Operations.AdminControlWebhook.Input.Path.ActionPayload(rawValue: action) else {
            return try await webhooks(signedIn, flash: nil, failure: "There is no webhook action \(action).")
        }
        var body: Operations.AdminControlWebhook.Input.Body?
        if chosen == .replay {
            let user = form["userId", default: ""].trimmingCharacters(in: .whitespaces)
            guard !user.isEmpty else { return try await webhooks(signedIn, flash: nil, failure: "Name the user whose events to replay.") }
            body = .json(.init(userId: user))
        }
        do {
            let request = body
            let output = try await logged(
                signedIn,
                "webhook.\(action)",
                subject: name,
                detail: body == nil ? nil : "user \(form["userId", default: ""])"
            ) {
                try await asOperator(signedIn) {
                    try await api.adminControlWebhook(.init(path: .init(name: name, action: chosen), body: request))
                }
            }
            let queued = try output.ok.body.json.queued
            let done =
                switch chosen {
                case .pause: "\(name) paused."
                case .resume: "\(name) resumed."
                case .retryDead: "\(queued) dead letter(s) of \(name) back in line."
                case .replay: "\(queued) event(s) queued again for \(name)."
                }
            return try await webhooks(signedIn, flash: done)
        } catch {
            return try await webhooks(signedIn, flash: nil, failure: Self.message(of: error))
        }
    }

    func runJob(_ name: String, _ signedIn: Operator) async throws -> Response {
        guard let job = Operations.AdminRunJob.Input.Path.JobPayload(rawValue: name) else {
            return try await jobs(signedIn, flash: nil, failure: "There is no job \(name).")
        }
        do {
            let output = try await asOperator(signedIn) { try await api.adminRunJob(.init(path: .init(job: job), body: nil)) }
            let items = try output.ok.body.json.items
            try await log(signedIn, "job.ran", subject: name, detail: "\(items) item(s)")
            return try await jobs(signedIn, flash: "\(name) ran: \(items) item(s).")
        } catch {
            return try await jobs(signedIn, flash: nil, failure: Self.message(of: error))
        }
    }
}

extension Calendar {
    /// The Gregorian calendar in UTC.
    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
}
