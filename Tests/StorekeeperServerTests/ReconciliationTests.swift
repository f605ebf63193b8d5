import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import Foundation
import NIOHTTP1
import SQLKit
import StorekeeperAPI
import StorekeeperCore
import StorekeeperServer
import StorekeeperStorage
import Testing

/// Issue 16 items 4 and 5: a simulated month of every kind of purchase, renewals, a price increase and refunds,
/// reconciled against the simulator's App Store Connect reports — which find exactly the lost order and the delivery
/// written around Storekeeper, and nothing else, on SQLite and PostgreSQL.
@Suite("Reconciliation against Apple's reports")
struct ReconciliationTests {
    static let coins = PurchaseFlowTests.coins

    /// Midnight starting `YYYY-MM-DD` as Apple's reports cut days (Pacific Time).
    static func start(of day: String) -> Date? { ReportCalendar.Day(day).map { ReportCalendar.apple.interval(of: $0).start } }

    /// The report day (Pacific Time) `date` falls on.
    static func day(_ date: Date) -> String { ReportCalendar.apple.day(of: date).description }

    static func run(_ server: ServerHarness, from: String, to: String) async throws -> Components.Schemas.Reconciliation {
        try await server.api(ServerHarness.adminHeaders).adminRunReconciliation(body: .json(.init(from: from, to: to))).ok.body.json
    }

    static func buy(_ server: ServerHarness, _ product: String, user: String, account: String) async throws -> SimulatedPurchase {
        let (orderId, purchase) = try await server.orderAndBuy(product, user: user, account: account)
        let reply = try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders(user), orderId: orderId)
        #expect(reply.status == 200, "\(product): \(reply.text)")
        return purchase
    }

    @Test("a month: reconcile finds exactly the lost order and the injected delivery", arguments: TestDatabase.available)
    func simulatedMonth(database: TestDatabase) async throws {
        try await ServerHarness.run(database, environment: .production) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let firstDay = Self.day(await server.simulatedNow)
            let us = try await store.createAccount(storefront: "USA").id
            let cn = try await store.createAccount(storefront: "CHN").id
            // Subscriptions: one with a free trial, one at full price whose price rises on day 10.
            for (user, product) in [("trial", PurchaseFlowTests.monthly), ("member", PurchaseFlowTests.standard)] {
                let (account, token) = try await server.newCustomer(user, product: product)
                _ = try await store.purchase(productId: product, account: account, options: PurchaseOptions(appAccountToken: token))
            }
            try await server.deliverAndApply()
            var refunded: String?
            var lostDay: String?
            var coinsPrice: Int64 = 0
            for day in 0..<34 {
                let bought = try await Self.buy(server, Self.coins, user: "buyer-us", account: us)
                coinsPrice = bought.transaction.price ?? coinsPrice
                _ = try await Self.buy(server, Self.coins, user: "buyer-cn", account: cn)
                switch day {
                case 2: _ = try await Self.buy(server, PurchaseFlowTests.chapter, user: "reader", account: us)
                case 4: _ = try await Self.buy(server, PurchaseFlowTests.pass, user: "visitor", account: cn)
                case 9: try await store.raisePrice(productId: PurchaseFlowTests.standard, to: 12_990, requiresConsent: false)
                case 11: refunded = bought.transaction.transactionId
                case 20:
                    // The lost order: the app dies before submitting and Apple's notification never arrives.
                    try await server.deliverAndApply()
                    await store.setDeliveryFaults(DeliveryFaults(dropNext: 1))
                    _ = try await server.orderAndBuy(Self.coins, user: "unlucky", account: us)
                    lostDay = Self.day(await server.simulatedNow)
                default: break
                }
                try await server.deliverAndApply()
                if day == 12, let refunded {
                    try await store.decideRefund(transactionId: refunded, approve: true)
                    try await server.deliverAndApply()
                }
                try await store.advance(by: 86_400)
                try await server.deliverAndApply()
            }
            // A delivery written straight into the database, around Storekeeper: Apple never sold it.
            let lostOn = try #require(lostDay)
            // Another day than the lost order's: on the same line the two would cancel out in the counts.
            let injectedAt = try #require(Self.start(of: firstDay)).addingTimeInterval(5 * 86_400 + 3_600)
            let injectedDay = Self.day(injectedAt)
            let price = coinsPrice
            try await server.withSideConnection { db in
                try await db.withSession { sql in
                    try await sql.raw(
                        """
                        INSERT INTO store_transactions (transaction_id, original_transaction_id, user_id, bundle_id, product_id, product_kind,
                            environment, quantity, purchase_date, source, delivered_at, price, currency, storefront)
                        VALUES ('2999000000000001', '2999000000000001', 'insider', 'com.example.storekeeper', \(bind: Self.coins), 'consumable',
                            'Production', 1, \(bind: injectedAt.millis), 'signedTransaction', \(bind: injectedAt.millis), \(bind: price), 'USD', 'USA')
                        """
                    ).run()
                }
            }
            try await store.advance(by: 86_400)
            let lastDay = Self.day(await server.simulatedNow)
            let middle = Self.day(try #require(Self.start(of: firstDay)).addingTimeInterval(20 * 86_400))
            var result = try await Self.run(server, from: firstDay, to: middle)
            let second = try await Self.run(server, from: middle, to: lastDay)
            result.days += second.days
            result.findings += second.findings

            #expect(result.days.count == 34 || result.days.count == 35)
            #expect(result.days.allSatisfy { $0.status == .reconciled }, "\(result.days.filter { $0.status != .reconciled })")
            // The subscription reports were compared every day too (a report missing would say so here), and agreed:
            // trials, conversions, renewals at the old and the new price.
            #expect(result.days.allSatisfy { $0.message == nil }, "\(result.days.compactMap(\.message))")
            let units = result.days.reduce(Int64(0)) { $0 + $1.appleUnits }
            #expect(units >= 70, "Apple's reports counted the month's sales: \(units)")
            #expect(result.days.reduce(Int64(0)) { $0 + $1.appleRefunds } == 1)
            // The injected delivery twice: in the day's counts, and by the per-transaction check Apple answers.
            #expect(result.findings.count == 3, "\(result.findings.map { "\($0.day) \($0.kind) \($0.productId) \($0.storefront): \($0.detail)" })")
            let unknown = try #require(result.findings.first { $0.kind == .unknownToApple })
            #expect(unknown.day == injectedDay && unknown.transactionIds == ["2999000000000001"])
            let lost = try #require(result.findings.first { $0.kind == .appleOnly })
            #expect(lost.day == lostOn && lost.productId == Self.coins && lost.storefront == "USA")
            #expect(lost.appleUnits - lost.storekeeperUnits == 1)
            let injected = try #require(result.findings.first { $0.kind == .storekeeperOnly })
            #expect(injected.day == injectedDay && injected.transactionIds.first == "2999000000000001")
            #expect(injected.detail.contains("Apple does not know 2999000000000001"), "\(injected.detail)")

            // Idempotent: the same two findings after running again; readable as JSON, CSV and metrics.
            _ = try await Self.run(server, from: injectedDay, to: Self.day(injectedAt.addingTimeInterval(86_400)))
            let stored = try await server.api(ServerHarness.adminHeaders).adminGetReconciliation(query: .init(from: firstDay, to: lastDay)).ok.body
                .json
            #expect(stored.findings.count == 3)
            #expect(stored.days.first { $0.day == injectedDay }?.runs == 2)
            let csv = try await server.call(
                .GET,
                "/v1/admin/reconciliation?from=\(firstDay)&to=\(lastDay)",
                headers: ServerHarness.adminHeaders + [("Accept", "text/csv")]
            )
            #expect(csv.text.split(separator: "\n").count == 4, "\(csv.text)")
            let metrics = MonitoringTests.Exposition(try await server.call(.GET, "/metrics").text)
            #expect(metrics.value("storekeeper_reconciliation_findings", ["kind": "apple_only"]) == 1)
            #expect(metrics.value("storekeeper_reconciliation_findings", ["kind": "storekeeper_only"]) == 1)
            #expect(metrics.value("storekeeper_reconciliation_runs_total", ["status": "reconciled"]) >= 35)
        }
    }

    @Test("a month against Apple's financial report: the lost order, and refunds and proceeds agreeing", arguments: TestDatabase.available)
    func financeMonth(database: TestDatabase) async throws {
        try await ServerHarness.run(database, environment: .production) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            // Apple's fiscal month (Sunday to Saturday) holding the simulator's today.
            let fiscal = ReportCalendar.fiscalMonth(containing: ReportCalendar.apple.day(of: await server.simulatedNow))
            let month = fiscal.name
            let us = try await store.createAccount(storefront: "USA").id
            let cn = try await store.createAccount(storefront: "CHN").id
            var bought: [String] = []
            for _ in 0..<3 {
                bought.append(try #require(try await Self.buy(server, Self.coins, user: "payer", account: us).transaction.transactionId))
            }
            _ = try await Self.buy(server, Self.coins, user: "payer-cn", account: cn)
            _ = try await Self.buy(server, PurchaseFlowTests.chapter, user: "reader", account: us)
            try await store.decideRefund(transactionId: bought[0], approve: true)
            try await server.deliverAndApply()
            await store.setDeliveryFaults(DeliveryFaults(dropNext: 1))
            _ = try await server.orderAndBuy(Self.coins, user: "unlucky", account: us)
            try await server.deliverAndApply()
            let admin = try server.api(ServerHarness.adminHeaders)
            // The month is not over: Apple has no financial report for it yet.
            let early = try await admin.adminRunMonthReconciliation(path: .init(month: month)).ok.body.json
            #expect(early.days.first?.status == .notAvailable)
            let monthEnd = ReportCalendar.apple.interval(of: fiscal).end
            try await store.advance(by: monthEnd.timeIntervalSince(await server.simulatedNow) + 3_600)
            let result = try await admin.adminRunMonthReconciliation(path: .init(month: month)).ok.body.json
            #expect(result.days.first?.status == .reconciled && result.days.first?.day == month)
            #expect(result.days.first?.appleRefunds == 1 && result.days.first?.storekeeperRefunds == 1)
            #expect(result.findings.count == 1, "\(result.findings.map { "\($0.kind) \($0.productId) \($0.storefront): \($0.detail)" })")
            let lost = try #require(result.findings.first)
            #expect(lost.kind == .appleOnly && lost.productId == Self.coins && lost.storefront == "USA")
            #expect(lost.appleUnits == 4 && lost.storekeeperUnits == 3)
            // Listed with the days of the month.
            let listed = try await admin.adminGetReconciliation(
                query: .init(from: fiscal.first.description, to: fiscal.first.adding(days: 1).description)
            ).ok.body.json
            #expect(listed.days.contains { $0.day == month } && listed.findings.count == 1)
            let bad = try await server.call(.POST, "/v1/admin/reconciliation/months/2026-13/run", headers: ServerHarness.adminHeaders)
            #expect(bad.status == 400)
        }
    }

    /// Issue 30 item 5: a lost order and a forged delivery on the same line and day cancel out in the counts; the
    /// per-transaction check still finds the forgery: its signature is not Apple's, and Apple does not know it.
    @Test(
        "faults that cancel out in the day's counts are found per transaction; lookups stop at their daily budget",
        arguments: TestDatabase.available,
        [1_000, 1]
    )
    func perTransaction(database: TestDatabase, lookups: Int) async throws {
        try await ServerHarness.run(database, environment: .production, configure: { $0.reports?.transactionLookupsPerDay = lookups }) { server in
            let store = server.store
            let us = try await store.createAccount(storefront: "USA").id
            let honest = try await Self.buy(server, Self.coins, user: "honest", account: us)
            // Lost: Apple sold it, Storekeeper never heard.
            _ = try await server.orderAndBuy(Self.coins, user: "unlucky", account: us)
            // Forged: the honest purchase copied under a new id and signed by someone else's chain, written straight in.
            var payload = try SignedDataVerifier.decodeUnverifiedPayload(honest.signedTransaction, as: JWSTransactionDecodedPayload.self)
            payload.transactionId = "2999000000000002"
            payload.originalTransactionId = "2999000000000002"
            let forged = try AppStoreSigningChain.generate(.init(name: "Forger")).signer().sign(payload)
            let now = await server.simulatedNow
            let price = try #require(honest.transaction.price)
            try await server.withSideConnection { db in
                try await db.withSession { sql in
                    try await sql.raw(
                        """
                        INSERT INTO store_transactions (transaction_id, original_transaction_id, user_id, bundle_id, product_id, product_kind,
                            environment, quantity, purchase_date, source, delivered_at, price, currency, storefront, signed_data)
                        VALUES ('2999000000000002', '2999000000000002', 'insider', 'com.example.storekeeper', \(bind: Self.coins), 'consumable',
                            'Production', 1, \(bind: now.millis), 'signedTransaction', \(bind: now.millis), \(bind: price), 'USD', 'USA', \(bind: forged))
                        """
                    ).run()
                }
            }
            let day = Self.day(now)
            try await store.advance(by: try #require(Self.start(of: day)).addingTimeInterval(86_400 + 3_600).timeIntervalSince(now))
            let result = try await Self.run(server, from: day, to: Self.day(await server.simulatedNow))
            let described = result.findings.map { "\($0.kind) \($0.transactionIds): \($0.detail)" }
            #expect(!result.findings.contains { $0.kind == .appleOnly || $0.kind == .storekeeperOnly }, "the counts agree: \(described)")
            #expect(result.findings.contains { $0.kind == .signatureInvalid && $0.transactionIds == ["2999000000000002"] }, "\(described)")
            if lookups > 1 {
                #expect(result.findings.count == 2, "\(described)")
                #expect(result.findings.contains { $0.kind == .unknownToApple && $0.transactionIds == ["2999000000000002"] }, "\(described)")
                #expect(result.days.first?.message == nil)
            } else {
                // One lookup a day: the honest transaction (bought first) was asked about; the day says what was not.
                #expect(result.findings.count == 1, "\(described)")
                #expect(result.days.first?.message?.contains("Apple was asked about 1 of 2 delivered transactions") == true, "\(result.days)")
            }
        }
    }

    /// Issue 30 item 7: the simulator's catalog names the Small Business Program, so its reports take Apple's 15 %
    /// and reconcile agrees with the server's estimate under the same program.
    @Test("a month in the Small Business Program: Apple's 15 % and Storekeeper's estimate agree", arguments: TestDatabase.available)
    func smallBusinessMonth(database: TestDatabase) async throws {
        var catalog = try ServerHarness.simulatorCatalog()
        catalog.smallBusinessProgram = [.init(start: "2020-01-01")]
        try await ServerHarness.run(
            database,
            environment: .production,
            catalog: catalog,
            configure: { $0.smallBusinessProgram = SmallBusinessProgram(periods: [.init(start: Date(timeIntervalSince1970: 1_577_836_800))]) }
        ) { server in
            let store = server.store
            let fiscal = ReportCalendar.fiscalMonth(containing: ReportCalendar.apple.day(of: await server.simulatedNow))
            let us = try await store.createAccount(storefront: "USA").id
            let cn = try await store.createAccount(storefront: "CHN").id
            for _ in 0..<3 { _ = try await Self.buy(server, Self.coins, user: "small", account: us) }
            _ = try await Self.buy(server, Self.coins, user: "small-cn", account: cn)
            _ = try await Self.buy(server, PurchaseFlowTests.chapter, user: "small", account: us)
            let monthEnd = ReportCalendar.apple.interval(of: fiscal).end
            try await store.advance(by: monthEnd.timeIntervalSince(await server.simulatedNow) + 3_600)
            let admin = try server.api(ServerHarness.adminHeaders)
            let result = try await admin.adminRunMonthReconciliation(path: .init(month: fiscal.name)).ok.body.json
            #expect(result.days.first?.status == .reconciled)
            #expect(result.findings.isEmpty, "\(result.findings.map { "\($0.kind) \($0.productId) \($0.storefront): \($0.detail)" })")
        }
    }

    @Test("subscription reports: a free trial the sales report cannot show, never seen by Storekeeper", arguments: TestDatabase.available)
    func unseenTrial(database: TestDatabase) async throws {
        try await ServerHarness.run(database, environment: .production) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (kept, keptToken) = try await server.newCustomer("kept", product: PurchaseFlowTests.monthly)
            _ = try await store.purchase(productId: PurchaseFlowTests.monthly, account: kept, options: PurchaseOptions(appAccountToken: keptToken))
            try await server.deliverAndApply()
            // A trial the app never submitted and whose notification was dropped: free, so no sales line shows it.
            let (unseen, unseenToken) = try await server.newCustomer("unseen", product: PurchaseFlowTests.monthly)
            await store.setDeliveryFaults(DeliveryFaults(dropNext: 1))
            _ = try await store.purchase(
                productId: PurchaseFlowTests.monthly,
                account: unseen,
                options: PurchaseOptions(appAccountToken: unseenToken)
            )
            try await server.deliverAndApply()
            let (member, memberToken) = try await server.newCustomer("member", product: PurchaseFlowTests.standard)
            _ = try await store.purchase(
                productId: PurchaseFlowTests.standard,
                account: member,
                options: PurchaseOptions(appAccountToken: memberToken)
            )
            try await server.deliverAndApply()
            let day = Self.day(await server.simulatedNow)
            try await store.advance(by: 86_400)
            try await server.deliverAndApply()

            let result = try await Self.run(server, from: day, to: try #require(ReportCalendar.Day(day)).adding(days: 1).description)
            #expect(result.days.first?.status == .reconciled && result.days.first?.message == nil, "\(result.days)")
            #expect(result.days.first?.appleUnits == 1 && result.days.first?.storekeeperUnits == 1, "the standard purchase, on both sides")
            #expect(result.findings.count == 2, "\(result.findings.map { "\($0.kind) \($0.productId) \($0.storefront): \($0.detail)" })")
            let subscribers = try #require(result.findings.first { $0.kind == .subscribersDiffer })
            #expect(subscribers.productId == PurchaseFlowTests.monthly && subscribers.storefront == "USA" && subscribers.currency.isEmpty)
            #expect(subscribers.appleUnits == 2 && subscribers.storekeeperUnits == 1)
            #expect(subscribers.detail.contains("0 subscriber(s) at the standard price and 2 in an offer"), "\(subscribers.detail)")
            let starts = try #require(result.findings.first { $0.kind == .subscriptionStartsDiffer })
            #expect(starts.productId == PurchaseFlowTests.monthly && starts.appleUnits == 2 && starts.storekeeperUnits == 1)
            // Filtered by kind, and counted in the metrics.
            let listed = try await server.api(ServerHarness.adminHeaders).adminGetReconciliation(
                query: .init(from: day, to: try #require(ReportCalendar.Day(day)).adding(days: 1).description, kind: .subscriptionStartsDiffer)
            ).ok.body.json
            #expect(listed.findings.count == 1)
            let metrics = MonitoringTests.Exposition(try await server.call(.GET, "/metrics").text)
            #expect(metrics.value("storekeeper_reconciliation_findings", ["kind": "subscribers_differ"]) == 1)
        }
    }

    @Test("subscription reports: a subscription Apple ended whose EXPIRED never reached Storekeeper", arguments: TestDatabase.available)
    func lostExpiry(database: TestDatabase) async throws {
        try await ServerHarness.run(database, environment: .production) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let (member, token) = try await server.newCustomer("leaver", product: PurchaseFlowTests.standard)
            let bought = try await store.purchase(
                productId: PurchaseFlowTests.standard,
                account: member,
                options: PurchaseOptions(appAccountToken: token)
            )
            try await server.deliverAndApply()
            try await store.setAutoRenew(false, originalTransactionId: try #require(bought.transaction.originalTransactionId))
            try await server.deliverAndApply()
            let expires = try #require(bought.transaction.expiresDate)
            try await store.advance(by: expires.timeIntervalSince(await server.simulatedNow) - 3_600)
            try await server.deliverAndApply()
            await store.setDeliveryFaults(DeliveryFaults(dropNext: 1))
            try await store.advance(by: 7_200)
            try await server.deliverAndApply()
            let day = Self.day(expires)
            try await store.advance(by: 86_400)
            let next = try #require(ReportCalendar.Day(day)).adding(days: 1).description
            let result = try await Self.run(server, from: day, to: next)
            #expect(result.days.first?.status == .reconciled && result.days.first?.message == nil, "\(result.days)")
            #expect(result.findings.count == 1, "\(result.findings.map { "\($0.kind) \($0.productId) \($0.storefront): \($0.detail)" })")
            let ended = try #require(result.findings.first)
            #expect(ended.kind == .subscriptionEndsDiffer && ended.productId == PurchaseFlowTests.standard && ended.storefront == "USA")
            #expect(ended.appleUnits == 1 && ended.storekeeperUnits == 0)

            // Once Storekeeper has the message (Apple retries; here it is delivered again by hand), the day agrees.
            await store.setDeliveryFaults(DeliveryFaults())
            let expired = try #require(await store.sentNotifications().last { $0.type == .expired })
            let reply = try await server.call(.POST, "/apple/notifications/v2", json: ["signedPayload": expired.signedPayload])
            #expect(reply.status == 200, "\(reply.text)")
            let again = try await Self.run(server, from: day, to: next)
            #expect(again.findings.isEmpty, "\(again.findings.map(\.detail))")
        }
    }

    @Test("a report not there yet, late or malformed is recorded and tried again, never taken as no sales")
    func unavailableReports() async throws {
        try await ServerHarness.run(.sqlite, environment: .production) { server in
            let store = server.store
            let account = try await store.createAccount(storefront: "USA").id
            _ = try await Self.buy(server, Self.coins, user: "early", account: account)
            let today = Self.day(await server.simulatedNow)
            let tomorrow = Self.day(await server.simulatedNow + 86_400)
            var run = try await Self.run(server, from: today, to: tomorrow)
            #expect(run.days.first?.status == .notAvailable, "today's report comes tomorrow")
            #expect(run.findings.isEmpty)
            try await store.advance(by: 86_400)
            server.faults.settings = .init(reportMalformedNext: 1)
            run = try await Self.run(server, from: today, to: tomorrow)
            #expect(run.days.first?.status == .failed)
            server.faults.settings = .init()
            run = try await Self.run(server, from: today, to: tomorrow)
            #expect(run.days.first?.status == .reconciled && run.findings.isEmpty, "\(run.findings.map(\.detail))")
            #expect(run.days.first?.appleUnits == 1 && run.days.first?.storekeeperUnits == 1)
            // A report that goes missing later does not wipe the reconciled day.
            server.faults.settings = .init(reportNotAvailableNext: 1)
            run = try await Self.run(server, from: today, to: tomorrow)
            let stored = try await server.api(ServerHarness.adminHeaders).adminGetReconciliation(query: .init(from: today, to: tomorrow)).ok.body.json
            #expect(stored.days.first?.status == .reconciled)
            // The daily job: the three days before the simulator's today, each reconciled (the earlier two sold nothing).
            #expect(try await server.runJob("reconciliation") == 3)

            let wide = try await server.call(
                .POST,
                "/v1/admin/reconciliation/run",
                json: ["from": "2026-01-01", "to": "2026-03-01"],
                headers: ServerHarness.adminHeaders
            )
            #expect(wide.status == 400 && wide.code == "invalid_range")
        }
    }
}
