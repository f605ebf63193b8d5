import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperCore
import StorekeeperServer
import Testing

/// `GET /v1/admin/users/{id}/revenue` over real sockets: what each purchase earned from the price, currency and
/// storefront Apple signed, the Small Business Program's periods from the configuration, and sandbox left out.
@Suite("Revenue per purchase")
struct RevenueTests {
    static let coins = "com.example.storekeeper.coins.60"

    static func revenue(_ server: ServerHarness, _ user: String) async throws -> Components.Schemas.UserRevenue {
        try await server.api(ServerHarness.adminHeaders).adminGetUserRevenue(path: .init(id: user)).ok.body.json
    }

    static func buy(_ server: ServerHarness, _ user: String, storefront: String? = nil) async throws {
        let account = try await server.store.createAccount(storefront: storefront).id
        let (orderId, purchase) = try await server.orderAndBuy(coins, user: user, account: account)
        let reply = try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders(user), orderId: orderId)
        #expect(reply.status == 200, "\(reply.text)")
    }

    @Test("production purchases: proceeds at 70 %, tax taken out where prices include it", arguments: TestDatabase.available)
    func production(database: TestDatabase) async throws {
        try await ServerHarness.run(database, environment: .production) { server in
            try await Self.buy(server, "payer")
            try await Self.buy(server, "payer", storefront: "CHN")
            let revenue = try await Self.revenue(server, "payer")
            #expect(revenue.transactions.count == 2)
            let usd = try #require(revenue.transactions.first { $0.currency == "USD" })
            #expect(usd.counted && usd.exact == true && usd.reason == .standard)
            let price = try #require(usd.customerPrice)
            #expect(usd.proceeds == (price * 700 + 500) / 1000)
            #expect(usd.tax == 0 && usd.netProceeds == usd.proceeds)
            let cny = try #require(revenue.transactions.first { $0.currency == "CNY" })
            #expect(cny.counted && cny.exact == false, "China's prices include VAT: an estimate")
            let cnyPrice = try #require(cny.customerPrice)
            #expect(cny.tax == (cnyPrice * 60 + 530) / 1060)
            #expect(revenue.totals.map(\.currency) == ["CNY", "USD"])
            #expect(revenue.totals.first { $0.currency == "USD" }?.netProceeds == usd.proceeds)
            #expect(revenue.totals.allSatisfy { $0.transactions == 1 })
        }
    }

    @Test("the Small Business Program's periods come from the configuration", arguments: [TestDatabase.sqlite])
    func smallBusiness(database: TestDatabase) async throws {
        let program = SmallBusinessProgram(periods: [.init(start: Date().addingTimeInterval(-86_400 * 400))])
        try await ServerHarness.run(database, environment: .production, configure: { $0.smallBusinessProgram = program }) { server in
            try await Self.buy(server, "small")
            let row = try #require(try await Self.revenue(server, "small").transactions.first)
            #expect(row.reason == .smallBusinessProgram && row.commissionPermille == 150)
            #expect(row.proceeds == (try #require(row.customerPrice) * 850 + 500) / 1000)
        }
    }

    @Test("a subscription renews into 15 % after a year of paid service; a refunded renewal nets nothing", arguments: [TestDatabase.sqlite])
    func afterOneYear(database: TestDatabase) async throws {
        try await ServerHarness.run(database, environment: .production) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let monthly = "com.example.storekeeper.membership.monthly.standard"
            let (account, token) = try await server.newCustomer("loyal", product: monthly)
            _ = try await store.purchase(productId: monthly, account: account, options: PurchaseOptions(appAccountToken: token))
            try await server.deliverAndApply()
            for _ in 0..<13 {
                try await store.advance(by: 31 * 86_400)
                try await server.deliverAndApply()
            }
            let rows = try await Self.revenue(server, "loyal").transactions.sorted { $0.purchaseDate < $1.purchaseDate }
            #expect(rows.count == 14)
            // Twelve monthly periods (about 12 · 30.4 days) are not yet a year; the thirteenth renewal starts after it.
            #expect(rows.prefix(12).allSatisfy { $0.reason == .standard }, "\(rows.map(\.paidServiceDays))")
            #expect(rows.last?.reason == .subscriptionAfterOneYear, "\(rows.map(\.paidServiceDays))")
            #expect((rows.last?.paidServiceDays ?? 0) >= 365)

            let latest = try #require(rows.last)
            try await store.requestRefund(transactionId: latest.transactionId)
            try await store.decideRefund(transactionId: latest.transactionId, approve: true)
            try await server.deliverAndApply()
            let refunded = try #require(try await Self.revenue(server, "loyal").transactions.first { $0.transactionId == latest.transactionId })
            #expect(refunded.refundedPrice == refunded.customerPrice)
            #expect(refunded.netProceeds == 0)
        }
    }

    @Test("sandbox purchases are listed, never counted", arguments: [TestDatabase.sqlite])
    func sandbox(database: TestDatabase) async throws {
        try await ServerHarness.run(database) { server in
            try await Self.buy(server, "tester")
            let revenue = try await Self.revenue(server, "tester")
            #expect(revenue.transactions.map(\.counted) == [false])
            #expect(revenue.transactions.first?.sandbox == true)
            #expect(revenue.totals.isEmpty)
        }
    }

    @Test("free trial periods are counted apart from paid units, as Apple's reports leave them out", arguments: TestDatabase.available)
    func freeUnitsApart(database: TestDatabase) async throws {
        try await ServerHarness.run(database, environment: .production) { server in
            try await Self.buy(server, "tess")
            let account = try await server.store.createAccount().id
            let (orderId, trial) = try await server.orderAndBuy(PurchaseFlowTests.monthly, user: "tess", account: account)
            #expect(trial.transaction.offerDiscountType?.rawValue == "FREE_TRIAL")
            #expect(try await server.submit(trial.signedTransaction, headers: ServerHarness.userHeaders("tess"), orderId: orderId).status == 200)
            let purchased = try #require(try await server.me("tess").transactions.first?.purchaseDate)
            let (today, tomorrow) = (RevenueReportBuilder.day(purchased), RevenueReportBuilder.day(purchased.addingTimeInterval(86_400)))
            let report = try await server.api(ServerHarness.adminHeaders).adminRevenueReport(query: .init(from: today, to: tomorrow)).ok.body.json
            let monthly = try #require(report.lines.first { $0.productId == PurchaseFlowTests.monthly })
            #expect(monthly.units == 0 && monthly.freeUnits == 1 && monthly.gross == 0)
            let coins = try #require(report.lines.first { $0.productId == Self.coins })
            #expect(coins.units == 1 && coins.freeUnits == 0)
            #expect(report.totals.first?.units == 1 && report.totals.first?.freeUnits == 1)
        }
    }

    @Test("the revenue report: lines and totals as JSON, the same as CSV, and bad ranges refused", arguments: TestDatabase.available)
    func report(database: TestDatabase) async throws {
        try await ServerHarness.run(database, environment: .production) { server in
            try await Self.buy(server, "a")
            try await Self.buy(server, "b")
            try await Self.buy(server, "c", storefront: "CHN")
            // The simulator's clock, not the wall clock, dates the purchases.
            let purchased = try #require(try await server.me("a").transactions.first?.purchaseDate)
            let today = RevenueReportBuilder.day(purchased)
            let tomorrow = RevenueReportBuilder.day(purchased.addingTimeInterval(86_400))
            let report = try await server.api(ServerHarness.adminHeaders)
                .adminRevenueReport(query: .init(from: today, to: tomorrow)).ok.body.json
            #expect(report.from == today && report.to == tomorrow && report.skipped == 0)
            #expect(report.lines.count == 2)
            let usd = try #require(report.lines.first { $0.currency == "USD" })
            #expect(usd.day == today && usd.productId == Self.coins && usd.units == 2)
            #expect(usd.gross == 2 * 990 && usd.proceeds == 2 * 693 && usd.net == usd.proceeds && usd.exact)
            #expect(report.totals.map(\.currency) == ["CNY", "USD"])
            #expect(report.totals.first { $0.currency == "USD" }?.gross == usd.gross)
            // Yesterday has nothing.
            let yesterday = RevenueReportBuilder.day(purchased.addingTimeInterval(-86_400))
            #expect(
                try await server.api(ServerHarness.adminHeaders).adminRevenueReport(query: .init(from: yesterday, to: today)).ok.body.json.lines
                    .isEmpty
            )

            let csv = try await server.call(
                .GET,
                "/v1/admin/reports/revenue?from=\(today)&to=\(tomorrow)",
                headers: ServerHarness.adminHeaders + [("Accept", "text/csv")]
            )
            #expect(csv.status == 200)
            let rows = csv.text.split(separator: "\r\n").map(String.init)
            #expect(rows.first == "day,product_id,storefront,currency,units,free_units,gross,tax,proceeds,refunds,refunded_proceeds,net,exact")
            #expect(rows.contains("\(today),\(Self.coins),USA,USD,2,0,1980,0,1386,0,0,1386,true"), "\(rows)")
            #expect(rows.count == 3)

            for (from, to) in [
                (today, today), (tomorrow, today), ("2026-02-30", "2026-03-01"), ("1999-12-31", "2000-01-02"),
                ("2026-01-01", "2027-01-03"), ("26-01-01", "2026-01-02"), ("2026-1-01", "2026-01-02"),
            ] {
                let reply = try await server.call(.GET, "/v1/admin/reports/revenue?from=\(from)&to=\(to)", headers: ServerHarness.adminHeaders)
                #expect(reply.status == 400, "\(from)..\(to)")
                #expect(reply.code == "invalid_range", "\(from)..\(to): \(reply.text)")
            }
            #expect(try await server.call(.GET, "/v1/admin/reports/revenue?from=\(today)&to=\(tomorrow)").status == 401)
        }
    }

    @Test("revenue.smallBusinessProgram is read and checked")
    func configuration() throws {
        let period = try ServerConfiguration.programPeriod("2026-01-01/2027-01-01")
        #expect(period.start == Date(timeIntervalSince1970: 1_767_225_600))
        #expect(period.end == Date(timeIntervalSince1970: 1_798_761_600))
        #expect(try ServerConfiguration.programPeriod("2026-01-01/").end == nil)
        for bad in ["2026-01-01", "2026-13-01/", "2027-01-01/2026-01-01", "/2026-01-01", "yesterday/"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try ServerConfiguration.programPeriod(bad) }
        }
    }
}
