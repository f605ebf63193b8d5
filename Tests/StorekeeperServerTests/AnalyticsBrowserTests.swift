import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperCore
import StorekeeperServer
import StorekeeperTestSupport
import Testing

/// The console's analytics in headless Chromium (`Tests/Browser/analytics_browser.py`): four months of subscribers
/// made through the simulator (trials, renewals, a cancellation, a card that never recovers), then the MRR chart, a
/// metric compared with the period before, churn of both kinds, a drill-down to the customers behind a point, the
/// cohort triangle and both CSV exports, at 1280 px. Screenshots land in `.build/console-screenshots`.
@Suite("Analytics in a browser")
struct AnalyticsBrowserTests {
    @Test(
        .enabled(
            if: ConsoleBrowserTests.available || ConsoleBrowserTests.required,
            "chromium, chromium-driver or Python selenium is missing (apt-get install chromium chromium-driver; pip install selenium); CI sets STOREKEEPER_REQUIRE_BROWSER=1"
        ),
        // Twenty minutes: the limit counts the wait for the one browser slot, which the other browser test may hold
        // for most of ten beside the whole suite on two cores.
        .timeLimit(.minutes(20))
    )
    func analyticsInChromium() async throws {
        try #require(ConsoleBrowserTests.available, "STOREKEEPER_REQUIRE_BROWSER=1 but chromium, chromedriver or selenium is missing")
        try await ServerHarness.run(.sqlite, environment: .production, configure: { ConsoleTests.configure(&$0) }) { server in
            let store = server.store
            await store.setDeliversNotifications(true)
            let start = await server.simulatedNow
            var accounts: [(String, String)] = []
            for index in 0..<12 {
                let product = index % 3 == 0 ? PurchaseFlowTests.standard : PurchaseFlowTests.monthly
                let (account, token) = try await server.newCustomer("browser-\(index)", product: product)
                let bought = try await store.purchase(productId: product, account: account, options: PurchaseOptions(appAccountToken: token))
                accounts.append((account, try #require(bought.transaction.originalTransactionId)))
                try await server.deliverAndApply()
                try await store.advance(by: 3 * 86_400)
            }
            try await store.setAutoRenew(false, originalTransactionId: accounts[1].1)
            try await store.setBillingFails(true, account: accounts[2].0)
            for _ in 0..<85 {
                try await store.advance(by: 86_400)
                try await server.deliverAndApply()
            }
            let from = RevenueReportBuilder.day(start)
            let to = RevenueReportBuilder.day(start.addingTimeInterval(122 * 86_400))
            let last = RevenueReportBuilder.day(start.addingTimeInterval(121 * 86_400))
            let admin = try server.api(ServerHarness.adminHeaders)
            let mrr = try await admin.adminAnalyticsChart(path: .init(metric: .mrr), query: .init(from: last, to: to)).ok.body.json.chart
            let value = try #require(mrr.series.first?.points.last?.value)
            #expect(value > 0)
            let churn = try await admin.adminAnalyticsChart(path: .init(metric: .churn), query: .init(from: from, to: to)).ok.body.json.chart
            #expect(churn.series.map { $0.points.reduce(0) { $0 + $1.value } } == [1, 1], "one voluntary, one involuntary: \(churn.series)")

            let screenshots = ConsoleBrowserTests.root.appendingPathComponent(".build/console-screenshots")
            let outcome = try await ConsoleBrowserTests.browsers.holding {
                try await ConsoleBrowserTests.run(
                    script: ConsoleBrowserTests.root.appendingPathComponent("Tests/Browser/analytics_browser.py"),
                    arguments: [
                        "--url", server.serverURL, "--operator", ConsoleTests.operators[2].0, "--secret", ConsoleTests.operators[2].2,
                        "--from", from, "--to", to, "--expect-mrr", String(format: "%.2f USD", Double(value) / 1000),
                        "--screenshots", screenshots.path, "--chromedriver", ConsoleBrowserTests.chromedriver,
                    ]
                )
            }
            #expect(outcome.status == 0, "\(outcome.output)")
            for page in [
                "analytics-mrr", "analytics-mrr-chart", "analytics-new-compared", "analytics-churn", "analytics-contributors", "analytics-cohorts",
            ] {
                #expect(FileManager.default.fileExists(atPath: screenshots.appendingPathComponent("\(page).png").path), "\(page) screenshot")
            }
        }
    }
}
