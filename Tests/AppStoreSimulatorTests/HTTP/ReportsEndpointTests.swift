import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// AppStoreWire's App Store Connect client against the simulator's report endpoints, over real sockets: reports
/// written from the simulator's sales, Apple's availability and error answers, the team-key token check.
@Suite("App Store Connect reports")
struct ReportsEndpointTests {
    typealias H = SimulatorHarness
    static let issuerId = "69a6de7e-0000-47e3-e053-5b8c7c11a4d1"
    static let coins = "com.example.storekeeper.coins.60"
    static let monthly = "com.example.storekeeper.membership.monthly.standard"

    func withSimulator(
        _ body: @Sendable @escaping (SimulatedAppStore, AppleEndpointFaults, P256.Signing.PrivateKey, Int) async throws -> Void
    )
        async throws
    {
        let catalog = try SimulatorCatalog.load(from: H.catalogURL)
        let chain = try AppStoreSigningChain.generate(.init(name: "Reports"))
        let store = try SimulatedAppStore(catalog: catalog, signingChain: chain, seed: 5, environment: .production)
        let key = P256.Signing.PrivateKey()
        let faults = AppleEndpointFaults()
        let apple = SimulatorServer.AppleSide(
            apiKeys: ["TEAMKEY1": key.publicKey],
            issuerId: Self.issuerId,
            receiptIdentity: try ReceiptSigningIdentity.generate(),
            faults: faults,
            vendorNumber: "80012345"
        )
        let app = await SimulatorServer.buildApplication(store: store, rootPEM: try chain.rootPEM(), apple: apple, port: 0)
        try await app.test(.live) { client in try await body(store, faults, key, try #require(client.port)) }
    }

    func client(_ key: P256.Signing.PrivateKey, port: Int) throws -> AppStoreConnectReportsClient {
        AppStoreConnectReportsClient(
            httpClient: .shared,
            tokens: try AppStoreConnectTokenGenerator(privateKeyPEM: key.pemRepresentation, keyId: "TEAMKEY1", issuerId: Self.issuerId),
            baseURL: "http://127.0.0.1:\(port)"
        )
    }

    func expectFailure(_ kind: AppStoreConnectReportError.Kind, _ body: () async throws(AppStoreConnectReportError) -> ReportTable) async {
        do {
            _ = try await body()
            Issue.record("expected \(kind)")
        } catch {
            #expect(error.kind == kind, "\(error)")
        }
    }

    @Test("a day's sales: units per product, price and country, refunds negative on their day, sandbox and free periods out")
    func dailySales() async throws {
        try await withSimulator { store, faults, key, port in
            let api = try client(key, port: port)
            let request = { (day: String) in SalesReportRequest(vendorNumber: "80012345", reportDate: day) }
            let us = try await store.createAccount(storefront: "USA").id
            let cn = try await store.createAccount(storefront: "CHN").id
            let first = try await store.purchase(productId: Self.coins, account: us)
            _ = try await store.purchase(productId: Self.coins, account: us)
            _ = try await store.purchase(productId: Self.coins, account: cn)
            _ = try await store.purchase(productId: Self.monthly, account: us)
            // Today's report is not there yet (the simulator starts at 2026-01-01 00:00 UTC: December 31 in Pacific Time,
            // where Apple's days are cut).
            await expectFailure(.notAvailable) { () async throws(AppStoreConnectReportError) in try await api.salesReport(request("2025-12-31")) }
            try await store.advance(by: 86_400)
            try await store.requestRefund(transactionId: first.transaction.transactionId!)
            try await store.decideRefund(transactionId: first.transaction.transactionId!, approve: true)

            let rows = try SalesReportRow.rows(of: try await api.salesReport(request("2025-12-31")))
            let coinsUS = try #require(rows.first { $0.sku == Self.coins && $0.countryCode == "US" })
            #expect(coinsUS.units == 2 && coinsUS.productTypeIdentifier == "IA1" && coinsUS.customerCurrency == "USD")
            let price = try #require(first.transaction.price)
            #expect(coinsUS.customerPrice == price)
            #expect(
                coinsUS.developerProceeds == (price * 700 + 500) / 1000 / 10 * 10
                    || coinsUS.developerProceeds == ((price * 700 + 500) / 1000 + 5) / 10 * 10
            )
            let coinsCN = try #require(rows.first { $0.sku == Self.coins && $0.countryCode == "CN" })
            #expect(coinsCN.units == 1 && coinsCN.customerCurrency == "CNY")
            #expect(coinsCN.developerProceeds < coinsCN.customerPrice * 700 / 1000, "China's VAT comes out before Apple's share")
            let subscription = try #require(rows.first { $0.sku == Self.monthly })
            #expect(subscription.productTypeIdentifier == "IAY" && subscription.subscription == "New")
            #expect(!rows.contains { $0.units < 0 }, "the refund is on the day Apple refunded")

            try await store.advance(by: 86_400)
            let refunds = try SalesReportRow.rows(of: try await api.salesReport(request("2026-01-01")))
            #expect(refunds.count == 1)
            #expect(refunds.first?.units == -1 && refunds.first?.customerPrice == -price && refunds.first?.sku == Self.coins)

            await expectFailure(.noSales) { () async throws(AppStoreConnectReportError) in try await api.salesReport(request("2025-12-30")) }
            faults.settings = .init(reportNotAvailableNext: 1)
            await expectFailure(.notAvailable) { () async throws(AppStoreConnectReportError) in try await api.salesReport(request("2025-12-31")) }
            faults.settings = .init(reportMalformedNext: 1)
            await expectFailure(.malformed) { () async throws(AppStoreConnectReportError) in try await api.salesReport(request("2025-12-31")) }
            faults.settings = .init(reportDelayHours: 30)
            await expectFailure(.notAvailable) { () async throws(AppStoreConnectReportError) in try await api.salesReport(request("2026-01-01")) }
            faults.settings = .init()
            #expect(try await api.salesReport(request("2026-01-01")).rows.count == 1)

            let other = SalesReportRequest(vendorNumber: "80099999", reportDate: "2025-12-31")
            await expectFailure(.unauthorized) { () async throws(AppStoreConnectReportError) in try await api.salesReport(other) }
            let stranger = try client(P256.Signing.PrivateKey(), port: port)
            await expectFailure(.unauthorized) { () async throws(AppStoreConnectReportError) in try await stranger.salesReport(request("2025-12-31"))
            }
            await expectFailure(.invalidRequest) { () async throws(AppStoreConnectReportError) in try await api.salesReport(request("2026-02-30")) }
        }
    }

    @Test("subscription reports: subscribers at the day's end by offer, the day's events, version 1_3 and daily only")
    func subscriptionReports() async throws {
        try await withSimulator { store, _, key, port in
            let api = try client(key, port: port)
            let us = try await store.createAccount(storefront: "USA").id
            let cn = try await store.createAccount(storefront: "CHN").id
            let trial = "com.example.storekeeper.membership.monthly"
            _ = try await store.purchase(productId: trial, account: us)
            _ = try await store.purchase(productId: Self.monthly, account: cn)
            let standard = try await store.purchase(productId: Self.monthly, account: try await store.createAccount(storefront: "USA").id)
            func request(_ type: String, _ day: String, version: String = "1_3", frequency: String = "DAILY") -> SalesReportRequest {
                SalesReportRequest(vendorNumber: "80012345", reportDate: day, reportType: type, frequency: frequency, version: version)
            }
            await expectFailure(.notAvailable) { () async throws(AppStoreConnectReportError) in
                try await api.salesReport(request("SUBSCRIPTION", "2025-12-31"))
            }
            try await store.advance(by: 86_400)
            let active = try SubscriptionReportRow.rows(of: try await api.salesReport(request("SUBSCRIPTION", "2025-12-31")))
            let trials = try #require(active.first { $0.subscriptionName == trial })
            #expect(trials.activeFreeTrialIntroductory == 1 && trials.activeStandardPrice == 0 && trials.country == "US")
            #expect(trials.customerPrice == 0)
            let paidUS = try #require(active.first { $0.subscriptionName == Self.monthly && $0.country == "US" })
            #expect(paidUS.activeStandardPrice == 1 && paidUS.activeInOffer == 0 && paidUS.customerPrice == standard.transaction.price)
            #expect(active.contains { $0.subscriptionName == Self.monthly && $0.country == "CN" && $0.activeStandardPrice == 1 })
            let catalog = try SimulatorCatalog.load(from: H.catalogURL)
            #expect(paidUS.subscriptionAppleId == String(try #require(catalog.product(Self.monthly)).reportAppleId))

            let events = try SubscriptionEventReportRow.rows(of: try await api.salesReport(request("SUBSCRIPTION_EVENT", "2025-12-31")))
            #expect(events.first { $0.subscriptionName == trial }?.event == "Start Introductory Offer")
            #expect(events.first { $0.subscriptionName == trial }?.offerType == "Free Trial")
            #expect(events.filter { $0.event == "Subscribe" }.map(\.quantity).reduce(0, +) == 2)
            #expect(events.allSatisfy { $0.eventDate == "2025-12-31" })

            // A month on: the trial became paid, the standard ones renewed; the day before the renewals sold nothing.
            try await store.advance(by: 31 * 86_400)
            var renewals: [SubscriptionEventReportRow] = []
            for offset in 1...31 {
                let day = try #require(ReportCalendar.Day("2025-12-31")).adding(days: offset).description
                do {
                    renewals += try SubscriptionEventReportRow.rows(of: try await api.salesReport(request("SUBSCRIPTION_EVENT", day)))
                } catch let error as AppStoreConnectReportError where error.kind == .noSales {
                    continue
                }
            }
            #expect(renewals.filter { $0.event == "Renew" }.map(\.quantity).reduce(0, +) == 2, "\(renewals.map(\.event))")
            #expect(renewals.contains { $0.event == "Paid Subscription from Introductory Offer" && $0.subscriptionName == trial })

            await expectFailure(.invalidRequest) { () async throws(AppStoreConnectReportError) in
                try await api.salesReport(request("SUBSCRIPTION", "2025-12-31", version: "1_2"))
            }
            await expectFailure(.invalidRequest) { () async throws(AppStoreConnectReportError) in
                try await api.salesReport(request("SUBSCRIPTION_EVENT", "2025-12", frequency: "MONTHLY"))
            }
        }
    }

    @Test("a month's finance report sums the month's sales and returns, with totals after the table")
    func finance() async throws {
        try await withSimulator { store, _, key, port in
            let api = try client(key, port: port)
            let us = try await store.createAccount(storefront: "USA").id
            let bought = try await store.purchase(productId: Self.coins, account: us)
            _ = try await store.purchase(productId: Self.coins, account: us)
            try await store.advance(by: 86_400 * 3)
            try await store.decideRefund(transactionId: bought.transaction.transactionId!, approve: true)
            let request = FinanceReportRequest(vendorNumber: "80012345", reportDate: "2026-01")
            await expectFailure(.notAvailable) { () async throws(AppStoreConnectReportError) in try await api.financeReport(request) }
            try await store.advance(by: 86_400 * 31)
            let table = try await api.financeReport(request)
            let rows = try FinanceReportRow.rows(of: table)
            let sales = try #require(rows.first { $0.saleOrReturn == "S" })
            let returns = try #require(rows.first { $0.saleOrReturn == "R" })
            #expect(sales.quantity == 2 && returns.quantity == -1)
            #expect(sales.extendedPartnerShare == 2 * sales.partnerShare)
            #expect(sales.countryOfSale == "US" && sales.vendorIdentifier == Self.coins)
            #expect(table.trailer.contains("Total_Units\t1"))
        }
    }
}
