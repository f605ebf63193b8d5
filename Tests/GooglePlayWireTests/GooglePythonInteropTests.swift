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
        probe.arguments = ["python3", "-c", "import googleapiclient.discovery, google.oauth2.service_account"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? ProcessLauncher.run(probe)) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop/google_play_client.py")

    @Test(.enabled(if: available || required, "google-api-python-client is not installed"))
    func googlesClientReadsAndChangesTheSimulatorsPurchases() async throws {
        let store = SimulatedPlayStore()
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

            let output = FileManager.default.temporaryDirectory.appendingPathComponent("play-judge-\(UUID().uuidString).log")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            defer { try? FileManager.default.removeItem(at: output) }
            let handle = try FileHandle(forWritingTo: output)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "python3", Self.script.path, "--base-url", "http://127.0.0.1:\(port)", "--key-file", keyFile.path,
                "--package", PlayCatalog.sample.packageName, "--consumable", coins.token, "--unlock", unlock.token,
                "--refund-order", refunded.orderId,
            ]
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
            try handle.close()
            let log = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            #expect(status == 0, "\(log)")
            // What Google's client did is what the simulator now holds.
            #expect(await store.purchase(coins.token)?.consumed == true)
            #expect(await store.purchase(unlock.token)?.developerPayload == "judge")
            #expect(await store.purchase(refunded.token)?.state == .canceled)
        }
    }
}
