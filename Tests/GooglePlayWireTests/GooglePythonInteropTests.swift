import Foundation
import GooglePlaySimulator
import GooglePlayWire
import Hummingbird
import HummingbirdTesting
import StorekeeperTestSupport
import Testing

/// Google's own Python client judges the Play simulator: `google-api-python-client` (its bundled androidpublisher v3
/// discovery document) with `google-auth` service-account credentials, whose token URI is the simulator's. CI
/// installs both and sets `STOREKEEPER_REQUIRE_GOOGLE_PYTHON=1`, so their absence fails there instead of skipping.
@Suite struct GooglePythonInteropTests {
    static let required = ProcessInfo.processInfo.environment["STOREKEEPER_REQUIRE_GOOGLE_PYTHON"] == "1"
    static let available: Bool = {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import googleapiclient.discovery, google.oauth2.service_account, requests, jwt"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? ProcessLauncher.run(probe)) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()
    static let interop = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop")

    /// Runs `python3 Tests/Interop/<script> arguments…` off the concurrency pool, output to a file.
    static func python(_ script: String, _ arguments: [String]) async throws -> (Int32, String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("play-judge-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let handle = try FileHandle(forWritingTo: output)
        defer { try? handle.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", interop.appendingPathComponent(script).path] + arguments
        process.standardOutput = handle
        process.standardError = handle
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try ProcessLauncher.run(process)
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        return (status, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }

    @Test(.enabled(if: available || required, "google-api-python-client is not installed"))
    func googlesClientReadsAndChangesTheSimulatorsPurchases() async throws {
        let store = try SimulatedPlayStore()
        let app = PlaySimulatorServer.buildApplication(store: store, port: 0)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let key = try await store.issueServiceAccount(email: "judge@sim.iam.gserviceaccount.com", tokenURI: "http://127.0.0.1:\(port)/token")
            let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("play-key-\(UUID().uuidString).json")
            #expect(FileManager.default.createFile(atPath: keyFile.path, contents: Data(key.json()), attributes: [.posixPermissions: 0o600]))
            defer { try? FileManager.default.removeItem(at: keyFile) }
            let account = await store.createAccount()
            let coins = try await store.buy(productId: "coins_100", account: account.id, quantity: 3, obfuscatedAccountId: "order-42")
            let unlock = try await store.buy(productId: "lifetime_pro", account: account.id)
            let other = await store.createAccount()
            let refunded = try await store.buy(productId: "coins_100", account: other.id)
            let subscription = try await store.subscribe(productId: "vip_monthly", account: account.id)
            let revoked = try await store.subscribe(productId: "vip_yearly", account: other.id)

            let (status, log) = try await Self.python(
                "google_play_client.py",
                [
                    "--base-url", "http://127.0.0.1:\(port)", "--key-file", keyFile.path, "--package", PlayCatalog.sample.packageName,
                    // `--name=value`: a token may start with "-", which argparse would take for an option.
                    "--consumable=\(coins.token)", "--unlock=\(unlock.token)", "--refund-order", refunded.orderId,
                    "--subscription=\(subscription.token)", "--revoke-subscription=\(revoked.token)",
                ]
            )
            #expect(status == 0, "\(log)")
            // What Google's client did is what the simulator now holds.
            #expect(await store.purchase(coins.token)?.consumed == true)
            #expect(await store.purchase(unlock.token)?.developerPayload == "judge")
            #expect(await store.purchase(refunded.token)?.state == .canceled)
            #expect(await store.subscription(subscription.token)?.acknowledged == true)
            #expect(await store.subscription(subscription.token)?.state == .canceled)
            #expect(await store.subscription(revoked.token)?.state == .expired)
        }
    }

    @Test(.enabled(if: available || required, "google-api-python-client is not installed"))
    func googlesClientReadsTheSimulatorsEarningsReports() async throws {
        let store = try SimulatedPlayStore(now: Date(timeIntervalSince1970: 1_790_000_000))
        let app = PlaySimulatorServer.buildApplication(store: store, port: 0)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let key = try await store.issueServiceAccount(email: "judge@sim.iam.gserviceaccount.com", tokenURI: "http://127.0.0.1:\(port)/token")
            let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("play-key-\(UUID().uuidString).json")
            #expect(FileManager.default.createFile(atPath: keyFile.path, contents: Data(key.json()), attributes: [.posixPermissions: 0o600]))
            defer { try? FileManager.default.removeItem(at: keyFile) }
            // 2026-09-21: a month of sales, a refund, a renewal, a tester's free purchase; the report once September is over.
            let account = await store.createAccount()
            let coins = try await store.buy(productId: "coins_100", account: account.id, quantity: 3)
            let unlock = try await store.buy(productId: "lifetime_pro", account: account.id)
            try await store.acknowledge(
                packageName: PlayCatalog.sample.packageName,
                productId: "coins_100",
                token: coins.token,
                developerPayload: nil
            )
            let monthly = try await store.subscribe(productId: "vip_monthly", account: account.id)
            try await store.acknowledgeSubscription(packageName: PlayCatalog.sample.packageName, token: monthly.token)
            _ = try await store.buy(productId: "coins_100", account: await store.createAccount(licenseTester: true).id)
            try await store.refund(packageName: PlayCatalog.sample.packageName, orderId: unlock.orderId, revoke: true)
            await store.advance(by: 12 * 86_400)
            let charges = [coins.orderId: "2.97", unlock.orderId: "24.99", monthly.latestOrderId: "4.99"]
            let body = { (value: [String: String]) in String(decoding: try JSONSerialization.data(withJSONObject: value), as: UTF8.self) }
            let (status, log) = try await Self.python(
                "google_play_reports.py",
                [
                    "--base-url", "http://127.0.0.1:\(port)", "--key-file", keyFile.path, "--bucket", SimulatedPlayStore.reportsBucket,
                    "--month", "202609", "--charges", try body(charges), "--refunds", try body([unlock.orderId: "24.99"]),
                ]
            )
            #expect(status == 0, "\(log)")
        }
    }

    @Test(.enabled(if: available || required, "google-auth is not installed"), arguments: ["oauth2/v1/certs", "oauth2/v3/certs"])
    func googleAuthVerifiesTheSimulatorsPushTokens(certs: String) async throws {
        let store = try SimulatedPlayStore()
        let app = PlaySimulatorServer.buildApplication(store: store, port: 0)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let audience = "https://storekeeper.example/google/rtdn"
            await store.configurePush(.init(endpoint: audience, serviceAccountEmail: "play-push@sim.iam.gserviceaccount.com"))
            let account = await store.createAccount()
            _ = try await store.buy(productId: "coins_100", account: account.id)
            let delivery = try #require(try await store.duePushes().first)
            let (status, log) = try await Self.python(
                "google_push_token.py",
                [
                    "--token=\(delivery.bearer)", "--audience", audience, "--certs-url", "http://127.0.0.1:\(port)/\(certs)",
                    "--email", "play-push@sim.iam.gserviceaccount.com",
                ]
            )
            #expect(status == 0, "\(log)")
        }
    }
}
