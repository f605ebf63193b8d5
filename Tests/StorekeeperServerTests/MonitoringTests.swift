import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import SQLKit
import StorekeeperAPI
import StorekeeperServer
import StorekeeperStorage
import Testing

/// The business metrics (seed 004's list) over real sockets, and the alert rules and Grafana dashboard under
/// `deploy/`: every expression in them names a metric family the server declares and exports with that type.
@Suite("Monitoring")
struct MonitoringTests {
    static let deploy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("deploy")

    /// One exposition, as `name{labels}` → value and family → type.
    struct Exposition {
        var samples: [String: Double] = [:]
        var types: [String: String] = [:]

        init(_ text: String) {
            for line in text.split(separator: "\n") {
                if line.hasPrefix("# TYPE ") {
                    let parts = line.split(separator: " ")
                    if parts.count == 4 { types[String(parts[2])] = String(parts[3]) }
                } else if !line.hasPrefix("#"), let space = line.lastIndex(of: " ") {
                    samples[String(line[..<space])] = Double(line[line.index(after: space)...])
                }
            }
        }

        /// The value of the series whose labels include all of `labels` (summed over the rest).
        func value(_ name: String, _ labels: [String: String] = [:]) -> Double {
            var total = 0.0
            for (key, value) in samples {
                guard key == name || key.hasPrefix(name + "{") else { continue }
                if labels.allSatisfy({ key.contains("\($0.key)=\"\($0.value)\"") }) { total += value }
            }
            return total
        }
    }

    // MARK: The expressions in deploy/

    /// Every PromQL expression in the alert rules (`expr:` inline or as a block) and the dashboard's targets.
    static func expressions() throws -> [(source: String, expr: String)] {
        var found: [(String, String)] = []
        let rules = try String(contentsOf: deploy.appendingPathComponent("prometheus/storekeeper-alerts.yml"), encoding: .utf8)
        let lines = rules.components(separatedBy: "\n")
        var index = 0
        while index < lines.count {
            let line = lines[index]
            if let range = line.range(of: "expr: ") {
                let indent = line.prefix { $0 == " " }.count
                let inline = line[range.upperBound...].trimmingCharacters(in: .whitespaces)
                if inline == "|" {
                    var block: [String] = []
                    index += 1
                    while index < lines.count, lines[index].prefix(while: { $0 == " " }).count > indent || lines[index].isEmpty {
                        block.append(lines[index])
                        index += 1
                    }
                    found.append(("rules", block.joined(separator: "\n")))
                    continue
                }
                found.append(("rules", inline))
            }
            index += 1
        }
        let data = try Data(contentsOf: deploy.appendingPathComponent("grafana/storekeeper-dashboard.json"))
        let dashboard = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        for panel in dashboard["panels"] as? [[String: Any]] ?? [] {
            for target in panel["targets"] as? [[String: Any]] ?? [] {
                found.append(("dashboard \(panel["title"] as? String ?? "?")", try #require(target["expr"] as? String)))
            }
        }
        return found
    }

    /// The metric names an expression selects: identifiers directly before `{` or `[`, or with the server's
    /// prefixes anywhere (a bare `storekeeper_x > 0`).
    static func metricNames(in expr: String) -> Set<String> {
        var names = Set<String>()
        let characters = Array(expr.unicodeScalars)
        var index = 0
        func isStart(_ c: Unicode.Scalar) -> Bool { CharacterSet.letters.contains(c) || c == "_" || c == ":" }
        func isPart(_ c: Unicode.Scalar) -> Bool { isStart(c) || CharacterSet.decimalDigits.contains(c) }
        var insideBraces = false
        var insideQuotes = false
        while index < characters.count {
            let c = characters[index]
            if c == "\"" { insideQuotes.toggle() }
            if insideQuotes {
                index += 1
                continue
            }
            if c == "{" { insideBraces = true }
            if c == "}" { insideBraces = false }
            guard isStart(c), !insideBraces else {
                index += 1
                continue
            }
            var end = index
            while end < characters.count, isPart(characters[end]) { end += 1 }
            let word = String(String.UnicodeScalarView(characters[index..<end]))
            let next = end < characters.count ? characters[end] : " "
            if next == "{" || next == "[" || word.hasPrefix("storekeeper_") || word.hasPrefix("http_server_") { names.insert(word) }
            index = end
        }
        return names
    }

    /// The family a selected name belongs to: itself, or a histogram's `_bucket`, `_sum`, `_count`.
    static func family(of name: String) -> ServerMetrics.Family? {
        if let family = ServerMetrics.families.first(where: { $0.name == name }) { return family }
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if let family = ServerMetrics.families.first(where: { $0.name == base && $0.kind == .histogram }) { return family }
        }
        return nil
    }

    @Test("the rules and the dashboard name only families the server declares")
    func expressionsNameDeclaredFamilies() throws {
        let expressions = try Self.expressions()
        #expect(expressions.filter { $0.source == "rules" }.count >= 10)
        #expect(expressions.filter { $0.source != "rules" }.count >= 20)
        for (source, expr) in expressions {
            let names = Self.metricNames(in: expr)
            #expect(!names.isEmpty, "\(source): no metric in \(expr)")
            for name in names {
                #expect(Self.family(of: name) != nil, "\(source): \(name) is not a metric the server exports (\(expr))")
            }
        }
        // The parser itself: a misspelt family is caught, PromQL's functions and labels are not taken for metrics.
        #expect(Self.metricNames(in: "sum by (le) (rate(storekeeper_refund_total{kind=\"refund\"}[5m])) > 0") == ["storekeeper_refund_total"])
        #expect(Self.family(of: "storekeeper_refund_total") == nil)
        #expect(Self.family(of: "storekeeper_delivery_delay_seconds_bucket")?.kind == .histogram)
        #expect(Self.family(of: "storekeeper_orders_total_bucket") == nil)
    }

    @Test(
        "a day of business in the metrics: orders, submissions, deliveries, refunds, refund questions, backlog",
        arguments: TestDatabase.available
    )
    func businessMetrics(database: TestDatabase) async throws {
        try await ServerHarness.run(
            database,
            environment: .production,
            configure: {
                $0.lifecycle.customerConsented = true
                // An endpoint (nobody listens on the discard port) so its families are exported too.
                $0.webhooks = [WebhookConfiguration(name: "backend", url: URL(string: "http://127.0.0.1:9/hook")!, secrets: WebhookTests.secrets)]
            }
        ) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            // The counters start at the outbox's end: what happened before the first read is not counted.
            let (earlyAccount, earlyToken) = try await server.newCustomer("early", product: RevenueTests.coins)
            _ = try await store.purchase(productId: RevenueTests.coins, account: earlyAccount, appAccountToken: earlyToken)
            try await server.deliverAndApply()
            _ = try await server.runJob("business-metrics")

            let account = try await store.createAccount().id
            let (orderId, bought) = try await server.orderAndBuy(RevenueTests.coins, user: "mo", account: account)
            let reply = try await server.submit(bought.signedTransaction, headers: ServerHarness.userHeaders("mo"), orderId: orderId)
            #expect(reply.status == 200, "\(reply.text)")
            let forged = try await server.submit("eyJhbGciOiJFUzI1NiJ9.e30.AAAA", headers: ServerHarness.userHeaders("mo"))
            #expect(forged.status == 400 || forged.status == 422, "\(forged.text)")
            let transactionId = try #require(bought.transaction.transactionId)
            let price = try #require(bought.transaction.price)
            // The customer asks for a refund: Apple asks Storekeeper, Storekeeper answers in time, Apple refunds.
            try await store.requestRefund(transactionId: transactionId)
            try await server.deliverAndApply()
            #expect(try await server.runJob("consumption-responder", now: await server.simulatedNow + 3_600) == 1)
            try await store.decideRefund(transactionId: transactionId, approve: true)
            try await server.deliverAndApply()
            // A subscription bought without an order names nobody: it waits on the recovery list.
            let stranger = try await store.createAccount().id
            _ = try await store.purchase(productId: PurchaseFlowTests.monthly, account: stranger)
            try await server.deliverAndApply()
            _ = try await server.runJob("catch-up")
            // A dead letter, as the processor leaves one after its last attempt.
            try await server.withSideConnection { db in
                try await db.withSession { sql in
                    try await sql.raw("UPDATE notifications SET status = 'dead' WHERE id = (SELECT MIN(id) FROM notifications)").run()
                }
            }
            let counted = try await server.runJob("business-metrics")
            #expect(counted >= 3, "delivered, consumption answered, refunded (the types the counters read)")

            let exposition = Exposition(try await server.call(.GET, "/metrics").text)
            // Google Play's families are checked where an app sells there (GooglePlayPurchaseTests).
            let play = Set(ServerMetrics.googlePlayFamilies.map(\.name))
            for family in ServerMetrics.families where !play.contains(family.name) {
                #expect(exposition.types[family.name] == family.kind.rawValue, "\(family.name) is not exported as a \(family.kind)")
            }
            // Orders are counted as the API creates them; payments as the outbox shows them, from the first read on.
            #expect(exposition.value("storekeeper_orders_total", ["event": "created"]) == 2)
            #expect(exposition.value("storekeeper_orders_total", ["event": "paid"]) == 1, "the early order was paid before the first read")
            #expect(exposition.value("storekeeper_submissions_total", ["path": "signed_transaction", "outcome": "delivered"]) == 1)
            #expect(exposition.value("storekeeper_submissions_total", ["path": "signed_transaction", "outcome": "rejected"]) == 1)
            #expect(exposition.value("storekeeper_submissions_total", ["path": "notification_v2", "outcome": "stored"]) >= 4)
            #expect(
                exposition.value(
                    "storekeeper_purchases_delivered_total",
                    ["environment": "Production", "product_kind": "consumable", "via": "signedTransaction"]
                ) == 1
            )
            #expect(exposition.value("storekeeper_delivery_delay_seconds_count", ["via": "signedTransaction"]) == 1)
            #expect(exposition.value("storekeeper_notification_lag_seconds_count", ["path": "notification_v2"]) >= 4)
            #expect(exposition.value("storekeeper_refunds_total", ["product_id": RevenueTests.coins, "kind": "refund"]) == 1)
            #expect(exposition.value("storekeeper_refunded_amount_total", ["currency": "USD"]) == Double(price) / 1000)
            #expect(exposition.value("storekeeper_consumption_answers_total", ["in_time": "true"]) == 1)
            #expect(exposition.value("storekeeper_consumption_answers_total", ["in_time": "false"]) == 0)
            #expect(exposition.value("storekeeper_consumption_answer_delay_seconds_count") == 1)
            #expect(exposition.value("storekeeper_consumption_requests_open") == 0)
            #expect(exposition.value("storekeeper_pending_recovery") == 1)
            #expect(exposition.value("storekeeper_notifications_backlog", ["status": "dead"]) == 1)
            #expect(exposition.value("storekeeper_apple_requests_total", ["endpoint": "notificationHistory"]) >= 1)
            #expect(exposition.value("storekeeper_business_metrics_refreshed_timestamp_seconds") > 0)

            // Every metric the rules and the dashboard select is exported, with the family's type.
            for (source, expr) in try Self.expressions() {
                for name in Self.metricNames(in: expr) {
                    let family = try #require(Self.family(of: name), "\(source): \(name)")
                    #expect(
                        exposition.types[family.name] == family.kind.rawValue,
                        "\(source): \(family.name) is not in /metrics"
                    )
                }
            }
        }
    }

    @Test("orders that ran out unpaid are counted once, when they expire")
    func expiredOrders() async throws {
        try await ServerHarness.run(.sqlite, configure: { $0.orderLifetime = .seconds(60) }) { server in
            _ = try await server.runJob("business-metrics", now: Date())
            for _ in 0..<3 {
                _ = try await server.api(ServerHarness.userHeaders("quitter")).createOrder(body: .json(.init(productId: RevenueTests.coins)))
            }
            _ = try await server.runJob("business-metrics", now: Date().addingTimeInterval(30))
            #expect(Exposition(try await server.call(.GET, "/metrics").text).value("storekeeper_orders_total", ["event": "expired"]) == 0)
            _ = try await server.runJob("business-metrics", now: Date().addingTimeInterval(120))
            _ = try await server.runJob("business-metrics", now: Date().addingTimeInterval(180))
            let exposition = Exposition(try await server.call(.GET, "/metrics").text)
            #expect(exposition.value("storekeeper_orders_total", ["event": "expired"]) == 3)
            #expect(exposition.value("storekeeper_orders_total", ["event": "created"]) == 3)
        }
    }
}
