import AppStoreWire
import AsyncHTTPClient
import Foundation
import GooglePlaySimulator
import GooglePlayWire
import NIOCore
import NIOHTTP1
import StorekeeperTestSupport
import Testing

/// The `storekeeper` processes behave like well-kept services (issue 13, items 14, 16 and 18): a failed start
/// exits non-zero at once with its cause in one line; SIGTERM and Ctrl-C shut down cleanly with exit 0 and no
/// error logged; the demo runs from any directory and talks only to its own simulator.
@Suite(.serialized) struct ProcessLifecycleTests {
    /// A child `storekeeper` process with its output captured in files.
    final class Child: @unchecked Sendable {
        let process = Process()
        let stdoutURL: URL
        let stderrURL: URL

        init(_ arguments: [String], environment: [String: String] = [:], directory: URL? = nil) throws {
            let base = FileManager.default.temporaryDirectory.appendingPathComponent("sk-child-\(UUID().uuidString)")
            stdoutURL = base.appendingPathExtension("out")
            stderrURL = base.appendingPathExtension("err")
            _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
            _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
            process.executableURL = CommandLineTests.binary
            process.arguments = arguments
            var inherited = ProcessInfo.processInfo.environment
            for key in inherited.keys where key.hasPrefix("APPS") || key.hasPrefix("DB_") || key.hasPrefix("AUTH_") || key.hasPrefix("HTTP_") {
                inherited[key] = nil
            }
            process.environment = inherited.merging(environment) { _, new in new }
            if let directory { process.currentDirectoryURL = directory }
            process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
            process.standardError = try FileHandle(forWritingTo: stderrURL)
            process.standardInput = FileHandle.nullDevice
            try ProcessLauncher.run(process)
        }

        var stdout: String { (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "" }
        var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }

        /// Waits for exit up to `timeout`; nil when it is still running (then it is killed).
        func exitStatus(within timeout: Duration) async -> Int32? {
            let deadline = ContinuousClock.now + timeout
            while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
            guard !process.isRunning else {
                Foundation.kill(process.processIdentifier, SIGKILL)
                // Polled, not `waitUntilExit()`: that spins a run loop on one of the test's few cooperative threads.
                for _ in 0..<600 where process.isRunning { try? await Task.sleep(for: .milliseconds(50)) }
                return nil
            }
            return process.terminationStatus
        }

        func signal(_ signal: Int32) { Foundation.kill(process.processIdentifier, signal) }

        /// Waits until `text` appears in the output.
        func waitFor(_ text: String, within timeout: Duration = .seconds(120)) async -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if stdout.contains(text) || stderr.contains(text) { return true }
                if !process.isRunning { return false }
                try? await Task.sleep(for: .milliseconds(100))
            }
            return false
        }
    }

    /// A port nobody listens on right now (bound, read and released).
    static func freePort() -> Int { (try? ReservedClosedPort().port) ?? Int.random(in: 20_000..<40_000) }

    static func get(_ url: String, headers: [(String, String)] = []) async throws -> (status: Int, body: String) {
        var request = HTTPClientRequest(url: url)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 22)
        return (Int(response.status.code), String(buffer: body))
    }

    static func post(_ url: String, json: String, headers: [(String, String)] = []) async throws -> (status: Int, body: String) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(string: json))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 22)
        return (Int(response.status.code), String(buffer: body))
    }

    /// Waits until `url` answers `/health` with 200, as long as `child` runs (two minutes at most).
    static func waitForHealth(_ url: String, of child: Child) async -> Bool {
        for _ in 0..<1200 {
            if let reply = try? await get(url + "/health"), reply.status == 200 { return true }
            if !child.process.isRunning { return false }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// Lines a clean run must never log.
    static func errorLines(_ text: String) -> [Substring] {
        text.split(separator: "\n").filter {
            $0.contains(" error ") || $0.contains(" critical ") || $0.contains("CancellationError") || $0.contains("Already closed")
                || $0.contains("was not closed") || $0.contains("Fatal error") || $0.contains("Backtrace")
        }
    }

    static func serveEnvironment(database: String, port: Int) -> [String: String] {
        [
            "HTTP_PORT": String(port), "DB_SQLITE_PATH": database, "APPS_MAIN_APP_STORE_BUNDLE_ID": "com.example.storekeeper",
            "APPS_MAIN_APP_STORE_APP_APPLE_ID": "1234567890", "AUTH_ADMIN_KEYS": "ops:lifecycle-admin-key-0123456789",
            "LIFECYCLE_CATCH_UP_SECONDS": "0", "LIFECYCLE_SWEEP_SECONDS": "0",
        ]
    }

    static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sk-life-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    // MARK: Tests

    @Test("item 14: serve on a database it cannot open or migrate exits non-zero at once, with the cause in one line")
    func failedStartExits() async throws {
        let directory = try Self.scratch()
        let notADirectory = directory.appendingPathComponent("file")
        try Data("x".utf8).write(to: notADirectory)
        // A database whose tables are not Storekeeper's: the first migration fails.
        let foreign = directory.appendingPathComponent("foreign.sqlite").path
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sqlite.arguments = ["python3", "-c", "import sqlite3; c = sqlite3.connect('\(foreign)'); c.execute('CREATE TABLE users (x)'); c.commit()"]
        try ProcessLauncher.run(sqlite)
        sqlite.waitUntilExit()
        for database in [notADirectory.appendingPathComponent("db.sqlite").path, "/proc/storekeeper-test.sqlite", foreign] {
            let child = try Child(["serve"], environment: Self.serveEnvironment(database: database, port: Self.freePort()))
            let status = await child.exitStatus(within: .seconds(30))
            #expect(status != nil, "\(database): still running 30 s after a failed start")
            #expect(status != 0, "\(database)")
            let lines = child.stderr.split(separator: "\n").filter { !$0.isEmpty }
            #expect(lines.count >= 1, "\(database): the cause is printed")
            #expect(lines.last?.lowercased().contains("error") == true || lines.last?.contains("failed") == true, "\(child.stderr)")
            #expect(!child.stderr.contains("Backtrace") && !child.stderr.contains("Fatal error"), "\(child.stderr)")
        }
    }

    @Test("item 14: SIGTERM and Ctrl-C stop serve cleanly: exit 0, no error logged, WAL checkpointed")
    func serveShutsDownCleanly() async throws {
        for signal in [SIGTERM, SIGINT] {
            let directory = try Self.scratch()
            let database = directory.appendingPathComponent("storekeeper.sqlite").path
            let port = Self.freePort()
            let child = try Child(["serve"], environment: Self.serveEnvironment(database: database, port: port))
            #expect(await Self.waitForHealth("http://127.0.0.1:\(port)", of: child), "\(child.stderr)")
            let guest = try await Self.post("http://127.0.0.1:\(port)/v1/guests", json: "")
            #expect(guest.status == 201, "\(guest.body)")
            child.signal(signal)
            let status = await child.exitStatus(within: .seconds(30))
            #expect(status == 0, "signal \(signal): \(child.stderr)")
            #expect(Self.errorLines(child.stderr + child.stdout).isEmpty, "\(Self.errorLines(child.stderr + child.stdout))")
            let wal = (try? FileManager.default.attributesOfItem(atPath: database + "-wal")[.size] as? Int) ?? 0
            #expect(wal == 0, "the WAL was checkpointed and removed at close")
            let mode = try FileManager.default.attributesOfItem(atPath: database)[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
    }

    @Test("items 14 and 18: the simulator starts at the wall clock and stops cleanly on SIGTERM")
    func simulatorShutsDownCleanly() async throws {
        let directory = try Self.scratch()
        let port = Self.freePort()
        let child = try Child(["simulator", "--port", String(port), "--state-dir", directory.path], directory: directory)
        #expect(await Self.waitForHealth("http://127.0.0.1:\(port)", of: child), "\(child.stderr)")
        let clock = try await Self.get("http://127.0.0.1:\(port)/control/clock")
        let object = try JSONSerialization.jsonObject(with: Data(clock.body.utf8)) as? [String: Any]
        let now: Date? =
            (object?["now"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) }
            ?? (object?["now"] as? Double).map { Date(timeIntervalSince1970: $0 > 1e11 ? $0 / 1000 : $0) }
        let started = try #require(now, "\(clock.body)")
        #expect(abs(started.timeIntervalSinceNow) < 600, "the simulated clock starts now, not at a fixed date: \(clock.body)")
        child.signal(SIGTERM)
        let status = await child.exitStatus(within: .seconds(30))
        #expect(status == 0, "\(child.stderr)")
        #expect(Self.errorLines(child.stderr + child.stdout).isEmpty, "\(Self.errorLines(child.stderr + child.stdout))")
    }

    @Test("the simulator serves Google Play beside the App Store, its service account key kept (0600) across restarts")
    func simulatorServesGooglePlay() async throws {
        let directory = try Self.scratch()
        let (port, playPort) = (Self.freePort(), Self.freePort())
        let arguments = ["simulator", "--port", String(port), "--play-port", String(playPort), "--state-dir", directory.path]
        let keyFile = directory.appendingPathComponent("play-service-account.json")
        var token = ""
        for run in 1...2 {
            let child = try Child(arguments, directory: directory)
            #expect(await Self.waitForHealth("http://127.0.0.1:\(playPort)", of: child), "\(child.stderr)")
            #expect(try FileManager.default.attributesOfItem(atPath: keyFile.path)[.posixPermissions] as? Int == 0o600)
            let key = try ServiceAccountKey.parse(Array(try Data(contentsOf: keyFile)))
            let transport = AsyncHTTPPlayTransport(client: .shared)
            let api = PlayDeveloperAPIClient(
                baseURL: "http://127.0.0.1:\(playPort)",
                tokens: AccessTokenProvider(key: key, transport: transport),
                transport: transport
            )
            // A purchase on the device; Google's API answers it to the key the first run wrote.
            let account = try await Self.post("http://127.0.0.1:\(playPort)/device/accounts", json: "{}")
            let id = try #require((try JSONSerialization.jsonObject(with: Data(account.body.utf8)) as? [String: Any])?["id"] as? String)
            let bought = try await Self.post(
                "http://127.0.0.1:\(playPort)/device/purchases",
                json: #"{"account": "\#(id)", "productId": "coins_100"}"#
            )
            token = try #require((try JSONSerialization.jsonObject(with: Data(bought.body.utf8)) as? [String: Any])?["purchaseToken"] as? String)
            let purchase = try await api.getProduct(packageName: PlayCatalog.sample.packageName, productId: "coins_100", token: token)
            #expect(purchase.purchaseState == .purchased, "run \(run)")
            if run == 1 {
                // One virtual clock: the App Store simulator's moves Google Play's; Play's own advance refuses.
                func playClock() async throws -> Date? {
                    let clock = try await Self.get("http://127.0.0.1:\(playPort)/control/clock")
                    let text = (try JSONSerialization.jsonObject(with: Data(clock.body.utf8)) as? [String: Any])?["now"] as? String
                    return text.flatMap(PlayJSON.parseTimestamp)
                }
                let before = try #require(try await playClock())
                let moved = try await Self.post("http://127.0.0.1:\(port)/control/clock/advance", json: #"{"period": "P1M"}"#)
                #expect(moved.status == 200, "\(moved.body)")
                var after = before
                for _ in 0..<100 where after.timeIntervalSince(before) < 27 * 86_400 {
                    try await Task.sleep(for: .milliseconds(50))
                    after = try await playClock() ?? after
                }
                #expect(after.timeIntervalSince(before) >= 27 * 86_400, "Play's clock followed: \(before) → \(after)")
                let refused = try await Self.post("http://127.0.0.1:\(playPort)/control/advance", json: #"{"seconds": 60}"#)
                #expect(refused.status == 409 && refused.body.contains("/control/clock/advance"), "\(refused.body)")
            }
            child.signal(SIGTERM)
            #expect(await child.exitStatus(within: .seconds(30)) == 0, "\(child.stderr)")
            #expect(Self.errorLines(child.stderr + child.stdout).isEmpty, "\(Self.errorLines(child.stderr + child.stdout))")
        }
        #expect(!token.isEmpty)
        let refused = try Child(["simulator", "--play-push-url", "http://127.0.0.1:1/google/rtdn"], directory: directory)
        let status = await refused.exitStatus(within: .seconds(30))
        #expect(status != 0 && refused.stderr.contains("--play-port"), "\(refused.stderr)")
    }

    @Test("items 14 and 16: the demo runs from any directory, uses only its simulator, and stops cleanly on Ctrl-C")
    func demoIsSelfContained() async throws {
        let directory = try Self.scratch()
        let port = Self.freePort()
        let simulatorPort = Self.freePort()
        let child = try Child(["demo", "--port", String(port), "--simulator-port", String(simulatorPort)], directory: directory)
        #expect(await child.waitFor("Storekeeper demo"), "\(child.stderr)")
        #expect(await Self.waitForHealth("http://127.0.0.1:\(port)", of: child), "\(child.stderr)")
        let output = child.stdout
        let adminKey = try #require(
            output.split(separator: "\n").first { $0.contains("X-Admin-Key") }?.split(separator: " ").last.map(String.init),
            "\(output)"
        )
        #expect(output.contains(".storekeeper-demo"), "the demo says where its keys and database are: \(output)")
        #expect(output.contains(".p8"), "\(output)")

        // Every job talks to the built-in simulator: answered at once, not after a 30-second timeout against Apple.
        for job in ["catch-up", "renewal-sweep", "consumption-responder"] {
            let started = ContinuousClock.now
            let reply = try await Self.post(
                "http://127.0.0.1:\(port)/v1/admin/jobs/\(job)/run",
                json: "{}",
                headers: [("X-Admin-Key", adminKey)]
            )
            #expect(reply.status == 200, "\(job): \(reply.body)")
            #expect(ContinuousClock.now - started < .seconds(10), "\(job)")
        }
        let guest = try await Self.post("http://127.0.0.1:\(port)/v1/guests", json: "")
        #expect(guest.status == 201, "the walkthrough's first call works: \(guest.body)")

        child.signal(SIGINT)
        let status = await child.exitStatus(within: .seconds(30))
        #expect(status == 0, "\(child.stderr)")
        #expect(Self.errorLines(child.stderr + child.stdout).isEmpty, "\(Self.errorLines(child.stderr + child.stdout))")
    }

    /// Issue 33 item 4: the demo's Google Play walkthrough, as its printed commands do it: an order's
    /// obfuscatedAccountId, a purchase on the Play simulator's device, the token submitted and consumed; then a
    /// subscription that only Google's real-time notification (pushed by the simulator, verified by the server)
    /// delivers.
    @Test("the demo sells on Google Play: a consumable submitted, a subscription delivered by its notification")
    func demoGooglePlayWalkthrough() async throws {
        let directory = try Self.scratch()
        let (port, simulatorPort, playPort) = (Self.freePort(), Self.freePort(), Self.freePort())
        let child = try Child(
            [
                "demo", "--port", String(port), "--simulator-port", String(simulatorPort), "--play-port", String(playPort), "--state-dir",
                directory.path,
            ],
            directory: directory
        )
        #expect(await child.waitFor("Google Play simulator http://127.0.0.1:\(playPort)"), "\(child.stderr)")
        #expect(await Self.waitForHealth("http://127.0.0.1:\(port)", of: child), "\(child.stderr)")
        let server = "http://127.0.0.1:\(port)"
        let play = "http://127.0.0.1:\(playPort)"
        let token = try #require(
            child.stdout.split(separator: "\n").first { $0.contains("A user token for") }?.split(separator: " ").last.map(String.init)
        )
        let user = [("Authorization", "Bearer \(token)")]
        func object(_ text: String) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
        }
        func coins() async throws -> Int {
            let me = try object(try await Self.get(server + "/v1/me", headers: user).body)
            return (me["wallet"] as? [String: Any])?["coins"] as? Int ?? -1
        }

        let order = try await Self.post(
            server + "/v1/orders",
            json: #"{"productId":"coins_100","bundleId":"com.example.storekeeper"}"#,
            headers: user
        )
        #expect(order.status == 201, "\(order.body)")
        let obfuscated = try #require(try object(order.body)["obfuscatedAccountId"] as? String)
        let phone = try #require(try object(try await Self.post(play + "/device/accounts", json: "{}").body)["id"] as? String)
        let bought = try object(
            try await Self.post(
                play + "/device/purchases",
                json: #"{"account":"\#(phone)","productId":"coins_100","obfuscatedAccountId":"\#(obfuscated)"}"#
            ).body
        )
        let purchaseToken = try #require(bought["purchaseToken"] as? String)
        let submitted = try await Self.post(
            server + "/v1/purchases",
            json: #"{"store":"googlePlay","packageName":"com.example.storekeeper","productId":"coins_100","purchaseToken":"\#(purchaseToken)"}"#,
            headers: user
        )
        #expect(submitted.status == 200 && submitted.body.contains(#""outcome":"delivered""#), "\(submitted.body)")
        #expect(try await coins() == 100)

        // A subscription the app never submits: Google's notification delivers it.
        let membershipOrder = try object(
            try await Self.post(
                server + "/v1/orders",
                json: #"{"productId":"vip_monthly","bundleId":"com.example.storekeeper"}"#,
                headers: user
            ).body
        )
        let membershipAccount = try #require(membershipOrder["obfuscatedAccountId"] as? String)
        let subscribed = try await Self.post(
            play + "/device/purchases",
            json: #"{"account":"\#(phone)","productId":"vip_monthly","obfuscatedAccountId":"\#(membershipAccount)","trial":true}"#
        )
        #expect(subscribed.status == 201, "\(subscribed.body)")
        var member = false
        for _ in 0..<100 where !member {
            let me = try object(try await Self.get(server + "/v1/me", headers: user).body)
            member = (me["entitlements"] as? [[String: Any]] ?? []).contains {
                $0["entitlement"] as? String == "membership" && $0["active"] as? Bool == true
            }
            if !member { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(member, "the notification delivered the subscription")

        child.signal(SIGINT)
        let status = await child.exitStatus(within: .seconds(30))
        #expect(status == 0, "\(child.stderr)")
        #expect(Self.errorLines(child.stderr + child.stdout).isEmpty, "\(Self.errorLines(child.stderr + child.stdout))")
    }

    /// Issue 30 item 6: `demo --production` rehearses reconciliation: its simulator signs Production (labelled as a
    /// rehearsal), so its reports have the purchase and the day reconciles with Apple 1, Storekeeper 1, no finding.
    @Test("demo --production: a purchase, the simulator's day over, reconciled against its reports")
    func demoRehearsesReconciliation() async throws {
        let directory = try Self.scratch()
        let port = Self.freePort()
        let simulatorPort = Self.freePort()
        let child = try Child([
            "demo", "--production", "--port", String(port), "--simulator-port", String(simulatorPort), "--state-dir", directory.path,
        ])
        #expect(await child.waitFor("PRODUCTION REHEARSAL"), "\(child.stdout)\(child.stderr)")
        #expect(await Self.waitForHealth("http://127.0.0.1:\(port)", of: child), "\(child.stderr)")
        let server = "http://127.0.0.1:\(port)"
        let simulator = "http://127.0.0.1:\(simulatorPort)"
        let adminKey = try #require(
            child.stdout.split(separator: "\n").first { $0.contains("X-Admin-Key") }?.split(separator: " ").last.map(String.init)
        )
        func field(_ name: String, _ body: String) throws -> String {
            let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
            return try #require(object?[name] as? String, "\(name) in \(body)")
        }
        let guest = try field("token", try await Self.post(server + "/v1/guests", json: "").body)
        let order = try await Self.post(
            server + "/v1/orders",
            json: #"{"productId":"com.example.storekeeper.coins.60"}"#,
            headers: [("X-Storekeeper-Guest", guest)]
        )
        let account = try field("id", try await Self.post(simulator + "/device/accounts", json: "{}").body)
        let bought = try await Self.post(
            simulator + "/device/purchases",
            json:
                #"{"account":"\#(account)","productId":"com.example.storekeeper.coins.60","appAccountToken":"\#(try field("appAccountToken", order.body))"}"#
        )
        let submitted = try await Self.post(
            server + "/v1/purchases",
            json: #"{"signedTransaction":"\#(try field("signedTransaction", bought.body))"}"#,
            headers: [("X-Storekeeper-Guest", guest)]
        )
        #expect(submitted.status == 200 && submitted.body.contains(#""environment":"Production""#), "\(submitted.body)")
        let today = ReportCalendar.apple.day(of: Date())
        #expect(try await Self.post(simulator + "/control/clock/advance", json: #"{"seconds":90000}"#).status == 200)
        let reconciled = try await Self.post(
            server + "/v1/admin/reconciliation/run",
            json: #"{"from":"\#(today)","to":"\#(today.adding(days: 1))"}"#,
            headers: [("X-Admin-Key", adminKey)]
        )
        #expect(reconciled.status == 200, "\(reconciled.body)")
        let object = try JSONSerialization.jsonObject(with: Data(reconciled.body.utf8)) as? [String: Any]
        let day = (object?["days"] as? [[String: Any]])?.first
        #expect(
            day?["status"] as? String == "reconciled" && day?["appleUnits"] as? Int == 1 && day?["storekeeperUnits"] as? Int == 1,
            "\(reconciled.body)"
        )
        #expect((object?["findings"] as? [Any])?.isEmpty == true, "\(reconciled.body)")
        child.signal(SIGINT)
        #expect(await child.exitStatus(within: .seconds(30)) == 0, "\(child.stderr)")
    }

    @Test("item 17: a JSON configuration written as README shows it is honoured, and a wrong type stops the start naming the key")
    func jsonConfigurationAsDocumented() async throws {
        let directory = try Self.scratch()
        let port = Self.freePort()
        let adminKey = "json-admin-key-0123456789"
        let config: [String: Any] = [
            "http": ["port": port],
            "db": ["sqlite": ["path": directory.appendingPathComponent("json.sqlite").path]],
            "apps": ["main": ["bundleId": "com.example.storekeeper", "appAppleId": 1_234_567_890]],
            "auth": ["adminKeys": "ops:\(adminKey),ci:other-admin-key-0123456789"],
            "lifecycle": ["catchUpSeconds": 0, "sweepSeconds": 0],
        ]
        let file = directory.appendingPathComponent("storekeeper.json")
        try JSONSerialization.data(withJSONObject: config).write(to: file)
        let child = try Child(["serve", "--config", file.path])
        #expect(await Self.waitForHealth("http://127.0.0.1:\(port)", of: child), "\(child.stderr)")
        let admin = try await Self.get("http://127.0.0.1:\(port)/v1/admin/catalog", headers: [("X-Admin-Key", adminKey)])
        #expect(admin.status == 200, "the admin key from the JSON file works: \(admin.body)")
        child.signal(SIGTERM)
        #expect(await child.exitStatus(within: .seconds(30)) == 0)

        var wrong = config
        wrong["auth"] = ["adminKeys": 42]
        try JSONSerialization.data(withJSONObject: wrong).write(to: file)
        let refused = try Child(["serve", "--config", file.path])
        let status = await refused.exitStatus(within: .seconds(30))
        #expect(status != nil && status != 0)
        #expect(refused.stderr.contains("auth.adminKeys"), "the message names the key: \(refused.stderr)")
    }
}
