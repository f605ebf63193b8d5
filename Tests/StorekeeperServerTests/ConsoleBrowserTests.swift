import AppStoreSimulator
import AppStoreWire
import Foundation
import NIOHTTP1
import SQLKit
import StorekeeperAPI
import StorekeeperServer
import StorekeeperStorage
import StorekeeperTestSupport
import Testing

/// Issue 17's proof in a real browser: headless Chromium (Debian's `chromium` and `chromium-driver`) driven by
/// Python selenium (`Tests/Browser/console_browser.py`) against a running server with data made through the
/// simulator; the effects are checked in the database afterwards. Screenshots of every page go to
/// `.build/console-screenshots`. CI installs all three and sets `STOREKEEPER_REQUIRE_BROWSER=1`, so a missing piece
/// fails there instead of skipping.
@Suite("Operator console in Chromium")
struct ConsoleBrowserTests {
    static let required = ProcessInfo.processInfo.environment["STOREKEEPER_REQUIRE_BROWSER"] == "1"
    /// One headless Chromium at a time: two beside the whole suite's servers ran past their time limits together.
    static let browsers = AsyncSlots(1)
    static let chromedriver = "/usr/bin/chromedriver"
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let available: Bool = {
        guard FileManager.default.isExecutableFile(atPath: chromedriver), FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") else {
            return false
        }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import selenium"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? ProcessLauncher.run(probe)) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()

    @Test(
        .enabled(
            if: available || required,
            "chromium, chromium-driver or Python selenium is missing (apt-get install chromium chromium-driver; pip install selenium); CI sets STOREKEEPER_REQUIRE_BROWSER=1"
        ),
        // Twenty minutes: the limit counts the wait for the one browser slot, which the other browser test may hold
        // for most of ten beside the whole suite on two cores.
        .timeLimit(.minutes(20))
    )
    func everyPageInChromium() async throws {
        try #require(Self.available, "STOREKEEPER_REQUIRE_BROWSER=1 but chromium, chromedriver or selenium is missing")
        try await ServerHarness.run(
            .sqlite,
            configure: {
                ConsoleTests.configure(&$0)
                $0.lifecycle.maxAttempts = 2
                $0.lifecycle.processNotifications = true
            }
        ) { server in
            let store = server.store
            // A customer who bought coins.
            let account = try await store.createAccount().id
            let (orderId, purchase) = try await server.orderAndBuy(PurchaseFlowTests.coins, user: "alice", account: account)
            #expect(try await server.submit(purchase.signedTransaction, headers: ServerHarness.userHeaders("alice"), orderId: orderId).status == 200)
            let transactionId = try #require(purchase.transaction.transactionId)
            let appleOrder = try #require(await store.orderId(ofTransaction: transactionId))
            // A purchase nobody could be attributed to.
            let parked = try await store.purchase(productId: PurchaseFlowTests.chapter, account: account)
            #expect(try await server.submit(parked.signedTransaction, headers: [("X-API-Key", ServerHarness.apiKey)]).status == 202)
            // A dead letter: its subscription update fails twice while the table is away.
            await store.setDeliversNotifications(true)
            let (subscriber, token) = try await server.newCustomer("jay", product: PurchaseFlowTests.monthly)
            _ = try await store.purchase(productId: PurchaseFlowTests.monthly, account: subscriber, appAccountToken: token)
            try await server.withSideConnection { db in
                try await db.withSession { try await $0.raw("ALTER TABLE subscriptions RENAME TO subscriptions_away").run() }
            }
            try await server.deliverAndApply()
            for hours in [1.0, 2.0, 3.0] { try await server.runJob("process-notifications", now: Date().addingTimeInterval(hours * 3_600)) }
            try await server.withSideConnection { db in
                try await db.withSession { try await $0.raw("ALTER TABLE subscriptions_away RENAME TO subscriptions").run() }
            }
            let admin = try server.api(ServerHarness.adminHeaders)
            let dead = try await admin.adminListNotifications(query: .init(status: .dead)).ok.body.json.notifications
            let deadId = try #require(dead.first?.id)
            let coinsBefore = try await server.coins("alice")

            let screenshots = Self.root.appendingPathComponent(".build/console-screenshots")
            let outcome = try await Self.browsers.holding {
                try await Self.run(
                    script: Self.root.appendingPathComponent("Tests/Browser/console_browser.py"),
                    arguments: [
                        "--url", server.serverURL, "--operator", ConsoleTests.operators[2].0, "--secret", ConsoleTests.operators[2].2,
                        "--viewer", ConsoleTests.operators[0].0, "--viewer-secret", ConsoleTests.operators[0].2, "--transaction", transactionId,
                        "--apple-order", appleOrder, "--user", "alice", "--pending", try #require(parked.transaction.transactionId), "--dead", deadId,
                        "--product", PurchaseFlowTests.coins, "--screenshots", screenshots.path, "--chromedriver", Self.chromedriver,
                    ]
                )
            }
            #expect(outcome.status == 0, "\(outcome.output)")
            // What the browser did, in the database.
            #expect(try await server.coins("alice") == coinsBefore + 40)
            let alice = try await admin.adminGetUser(path: .init(id: "alice")).ok.body.json
            #expect(alice.transactions.contains { $0.transactionId == parked.transaction.transactionId })
            let retried = try await admin.adminListNotifications(query: .init(status: .dead)).ok.body.json.notifications
            #expect(!retried.contains { $0.id == deadId }, "the dead letter was retried (and processed by the job run)")
            let catalog = try await admin.adminGetCatalog().ok.body.json
            #expect(catalog.products.first { $0.id == PurchaseFlowTests.coins }?.coins == 90)
            for page in ["login", "overview", "find", "customer", "customer-at-moment", "notifications", "pending", "catalog", "product", "jobs"] {
                #expect(FileManager.default.fileExists(atPath: screenshots.appendingPathComponent("\(page).png").path), "\(page) screenshot")
            }
        }
    }

    /// Runs `python3 script arguments…` without blocking a concurrency thread; output goes to a file.
    static func run(script: URL, arguments: [String]) async throws -> (status: Int32, output: String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("console-browser-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path] + arguments
        process.standardOutput = handle
        process.standardError = handle
        let watchdog = Task {
            try await Task.sleep(for: .seconds(240))
            if process.isRunning { process.terminate() }
        }
        defer { watchdog.cancel() }
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try ProcessLauncher.run(process)
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        return (status, (try? String(contentsOf: log, encoding: .utf8)) ?? "")
    }
}
