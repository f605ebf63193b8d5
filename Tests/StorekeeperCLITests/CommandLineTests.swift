import AppStoreWire
import Crypto
import Foundation
import StorekeeperTestSupport
import Testing

@testable import storekeeper

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs the built `storekeeper` binary the way a user would.
@Suite struct CommandLineTests {
    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
        var json: [String: Any]? {
            try? JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any]
        }
    }

    static let binary: URL = {
        // The test runner sits in the build products directory, next to the executable.
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = runner.deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("storekeeper")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        return runner.deletingLastPathComponent().appendingPathComponent("storekeeper")
    }()

    func run(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> Run {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new } }
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try ProcessLauncher.run(process)
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus,
            stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self)
        )
    }

    /// A fresh directory holding `storekeeper sample` output.
    func samples() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storekeeper-cli-\(UUID().uuidString)")
        let result = try run(["sample", "--output", directory.path])
        #expect(result.status == 0, "\(result.stderr)")
        return directory
    }

    // MARK: Tests

    @Test func verifyPrintsTheVerifiedTransaction() throws {
        let dir = try samples()
        let result = try run([
            "verify", "--root", dir.appendingPathComponent("sample-root.pem").path, "--bundle-id",
            "com.example.storekeeper", dir.appendingPathComponent("sample-transaction.jws").path,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(result.json)
        #expect(json["verified"] as? Bool == true)
        #expect(json["kind"] as? String == "transaction")
        let payload = try #require(json["payload"] as? [String: Any])
        #expect(payload["transactionId"] as? String == "2000000123456789")
        #expect(payload["signedDate"] as? Int == 1_767_225_600_000)
    }

    @Test func verifyReadsStandardInputAndNestedNotificationPayloads() throws {
        let dir = try samples()
        let jws = try String(contentsOf: dir.appendingPathComponent("sample-notification.jws"), encoding: .utf8)
        let result = try run(["verify", "--root", dir.appendingPathComponent("sample-root.pem").path, "-"], stdin: jws)
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(result.json)
        #expect(json["kind"] as? String == "notification")
        #expect((json["payload"] as? [String: Any])?["notificationType"] as? String == "SUBSCRIBED")
        #expect((json["transactionInfo"] as? [String: Any])?["productId"] as? String == "com.example.storekeeper.vip.monthly")
    }

    @Test func verifyFailsWithAReasonAndNonZeroExit() throws {
        let dir = try samples()
        let transaction = dir.appendingPathComponent("sample-transaction.jws").path
        // Built-in Apple root only: the sample chain is not Apple's.
        let untrusted = try run(["verify", transaction])
        #expect(untrusted.status == 1)
        #expect(untrusted.stdout.isEmpty)
        #expect(untrusted.stderr.contains("invalid_certificate"))
        let root = dir.appendingPathComponent("sample-root.pem").path
        let wrongApp = try run(["verify", "--root", root, "--bundle-id", "com.example.other", transaction])
        #expect(wrongApp.status == 1)
        #expect(wrongApp.stderr.contains("wrong_app"))
        let wrongEnvironment = try run(["verify", "--root", root, "--environment", "Production", transaction])
        #expect(wrongEnvironment.status == 1)
        #expect(wrongEnvironment.stderr.contains("wrong_environment"))
        let garbage = try run(["verify", "-"], stdin: "this is not signed data")
        #expect(garbage.status != 0)
        #expect(!garbage.stderr.isEmpty)
    }

    @Test func decodeMarksOutputUnverified() throws {
        let dir = try samples()
        let result = try run(["decode", dir.appendingPathComponent("sample-transaction.jws").path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.json?["verified"] as? Bool == false)
        #expect(result.stderr.contains("UNVERIFIED"))
    }

    @Test func signOfferV1ProducesAVerifiableSignature() throws {
        let key = P256.Signing.PrivateKey()
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("sk-\(UUID().uuidString).p8")
        try key.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
        let result = try run([
            "sign-offer", "v1", "--key", keyFile.path, "--key-id", "ABC123", "--bundle-id", "com.example.app",
            "--product-id", "vip.monthly", "--offer-id", "WINBACK", "--app-account-token",
            "7E3FB20B-4CDB-47CC-936D-99D65F608138",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let signature = try JSONDecoder().decode(PromotionalOfferV1Signature.self, from: Data(result.stdout.utf8))
        #expect(signature.keyIdentifier == "ABC123")
        #expect(
            signature.isValid(
                publicKey: key.publicKey,
                bundleId: "com.example.app",
                productId: "vip.monthly",
                offerId: "WINBACK",
                appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138"
            )
        )
        #expect(
            !signature.isValid(
                publicKey: key.publicKey,
                bundleId: "com.example.app",
                productId: "vip.yearly",
                offerId: "WINBACK",
                appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138"
            )
        )
    }

    @Test func signOfferV2ProducesAJWS() throws {
        let key = P256.Signing.PrivateKey()
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("sk-\(UUID().uuidString).p8")
        try key.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
        let result = try run([
            "sign-offer", "v2", "--key", keyFile.path, "--key-id", "ABC123", "--issuer-id",
            "57246542-96fe-1a63-e053-0824d011072a", "--bundle-id", "com.example.app", "--product-id", "vip.monthly",
            "--offer-id", "WINBACK",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let parts = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let claimBytes = try #require(Base64URL.decode(parts[1]))
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any])
        #expect(claims["aud"] as? String == "promotional-offer")
        #expect(claims["offerIdentifier"] as? String == "WINBACK")
        let signatureBytes = try #require(Base64URL.decode(parts[2]))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        #expect(key.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: CommandLineTests.appleVectors.path)))
    func verifiesApplesTestNotificationWithTheirTestRoot() throws {
        let result = try run([
            "verify", "--root", Self.appleVectors.appendingPathComponent("certs/testCA.der").path, "--bundle-id",
            "com.example", "--environment", "Sandbox",
            Self.appleVectors.appendingPathComponent("mock_signed_data/testNotification").path,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect((result.json?["payload"] as? [String: Any])?["notificationType"] as? String == "TEST")
        let receipt = try run(["decode", Self.appleVectors.appendingPathComponent("xcode/xcode-app-receipt-with-transaction").path])
        #expect(receipt.status == 0, "\(receipt.stderr)")
        let inApp = (receipt.json?["payload"] as? [String: Any])?["inAppPurchases"] as? [[String: Any]]
        #expect(inApp?.first?["transactionId"] as? String == "0")
        let legacy = try run(["decode", Self.appleVectors.appendingPathComponent("mock_signed_data/legacyTransaction").path])
        #expect(legacy.status == 0, "\(legacy.stderr)")
        #expect((legacy.json?["payload"] as? [String: Any])?["transactionId"] as? String == "33993399")
    }

    /// Runs the binary with its output in files and waits without blocking a thread (for tests beside long-lived
    /// children: a pipe's write end inherited by another test's child would hold `run(_:)`'s read open).
    func runAsync(_ arguments: [String], environment: [String: String] = [:]) async throws -> Run {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("sk-run-\(UUID().uuidString)")
        let outURL = base.appendingPathExtension("out")
        let errURL = base.appendingPathExtension("err")
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        process.standardInput = FileHandle.nullDevice
        try ProcessLauncher.run(process)
        for _ in 0..<1200 where process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        guard !process.isRunning else {
            Foundation.kill(process.processIdentifier, SIGKILL)
            Issue.record("storekeeper \(arguments.joined(separator: " ")) did not finish in 60 s")
            return Run(status: -1, stdout: "", stderr: "")
        }
        return Run(
            status: process.terminationStatus,
            stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
        )
    }

    /// `storekeeper report revenue` against a running demo: the table, the CSV, a refused range, and no key.
    @Test func revenueReportReadsARunningServer() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("storekeeper-cli-report-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let port = ProcessLifecycleTests.freePort()
        let demo = Process()
        demo.executableURL = Self.binary
        demo.arguments = ["demo", "--port", "\(port)", "--simulator-port", "\(ProcessLifecycleTests.freePort())", "--state-dir", state.path]
        demo.standardOutput = FileHandle.nullDevice
        demo.standardError = FileHandle.nullDevice
        try ProcessLauncher.run(demo)
        defer {
            demo.terminate()
            for _ in 0..<600 where demo.isRunning { usleep(10_000) }
        }
        let server = "http://127.0.0.1:\(port)"
        var up = false
        for _ in 0..<300 where !up {
            let answer = try? await URLSession.shared.data(from: URL(string: server + "/health/live")!)
            up = (answer?.1 as? HTTPURLResponse)?.statusCode == 200
            if !up { try await Task.sleep(for: .milliseconds(100)) }
        }
        try #require(up, "the demo started")
        let secrets = try JSONSerialization.jsonObject(with: Data(contentsOf: state.appendingPathComponent("demo-secrets.json"))) as? [String: Any]
        let key = try #require(secrets?["adminKey"] as? String)
        let range = ["--from", "2026-01-01", "--to", "2026-02-01", "--server", server]
        // The demo serves the operator console, with an operator of its own.
        #expect((secrets?["consoleSecret"] as? String)?.hasPrefix("con_") == true)
        let (login, loginResponse) = try await URLSession.shared.data(from: URL(string: server + "/admin/login")!)
        #expect((loginResponse as? HTTPURLResponse)?.statusCode == 200 && String(decoding: login, as: UTF8.self).contains("Sign in"))

        let table = try await runAsync(["report", "revenue"] + range, environment: ["STOREKEEPER_ADMIN_KEY": key])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout.hasPrefix("revenue 2026-01-01 to 2026-02-01"))
        #expect(table.stdout.contains("day  product  storefront  currency  units  free  gross  proceeds  refunds  net"))
        let csv = try await runAsync(["report", "revenue", "--csv"] + range, environment: ["STOREKEEPER_ADMIN_KEY": key])
        #expect(csv.status == 0 && csv.stdout.hasPrefix("day,product_id,storefront,currency,units,free_units,gross"))
        let backwards = try await runAsync(
            ["report", "revenue", "--from", "2026-02-01", "--to", "2026-01-01", "--server", server],
            environment: ["STOREKEEPER_ADMIN_KEY": key]
        )
        #expect(backwards.status == 1 && backwards.stderr.contains("invalid_range"))
        let wrongKey = try await runAsync(["report", "revenue"] + range, environment: ["STOREKEEPER_ADMIN_KEY": "not-the-key-at-all"])
        #expect(wrongKey.status == 1 && wrongKey.stderr.contains("401"))
        let noKey = try await runAsync(["report", "revenue"] + range, environment: ["STOREKEEPER_ADMIN_KEY": ""])
        #expect(noKey.status != 0 && noKey.stderr.contains("STOREKEEPER_ADMIN_KEY"))

        let subscriptions = try await runAsync(["report", "subscriptions"] + range, environment: ["STOREKEEPER_ADMIN_KEY": key])
        #expect(subscriptions.status == 0 && subscriptions.stdout.hasPrefix("subscriptions 2026-01-01 to 2026-02-01"), "\(subscriptions.stderr)")
        // The demo reconciles against its simulator (a sandbox: Apple's reports and Storekeeper's books both empty).
        let reconcile = try await runAsync(
            ["reconcile", "--from", "2026-01-01", "--to", "2026-01-03", "--server", server],
            environment: ["STOREKEEPER_ADMIN_KEY": key]
        )
        #expect(reconcile.status == 0, "\(reconcile.stderr)")
        #expect(reconcile.stdout.contains("2026-01-01  reconciled") && reconcile.stdout.contains("2026-01-02  reconciled"), "\(reconcile.stdout)")
        #expect(reconcile.stdout.hasSuffix("no findings\n"))
        let findingsCSV = try await runAsync(
            ["reconcile", "--csv", "--from", "2026-01-01", "--to", "2026-01-02", "--server", server],
            environment: ["STOREKEEPER_ADMIN_KEY": key]
        )
        #expect(
            findingsCSV.status == 0
                && findingsCSV.stdout
                    == "day,kind,product_id,storefront,currency,apple_units,storekeeper_units,apple_amount,storekeeper_amount,transaction_ids,detail\n"
        )
        let month = try await runAsync(["reconcile", "--month", "2026-01", "--server", server], environment: ["STOREKEEPER_ADMIN_KEY": key])
        #expect(month.status == 0 && month.stdout.hasPrefix("2026-01  reconciled"), "\(month.stdout) \(month.stderr)")
        let both = try await runAsync(
            ["reconcile", "--month", "2026-01", "--from", "2026-01-01", "--to", "2026-01-02"],
            environment: ["STOREKEEPER_ADMIN_KEY": key]
        )
        #expect(both.status != 0 && both.stderr.contains("--month"))
        let badRange = try await runAsync(["reconcile", "--from", "2026-01-05", "--to", "2026-01-01"], environment: ["STOREKEEPER_ADMIN_KEY": key])
        #expect(badRange.status != 0 && badRange.stderr.contains("--from"))
    }

    @Test func simulatorHelpDocumentsEveryOption() throws {
        let help = try run(["simulator", "--help"])
        #expect(help.status == 0)
        for option in [
            "--host", "--port", "--catalog", "--seed", "--state-dir", "--root-out", "--start", "--renewal-limit",
            "--v1-notifications", "--real-time", "--shared-secret", "--notification-url", "--environment", "--ocsp-url", "--play-port",
            "--play-push-url",
        ] {
            #expect(help.stdout.contains(option), "\(option) is not documented")
        }
    }

    /// The catalogs built into the executable (the demo and the simulator sell them from any directory) are the
    /// ones in `Samples/`, byte for byte.
    @Test func builtInCatalogsAreTheSamples() throws {
        let dir = try samples()
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        for name in ["storekeeper-catalog.json", "simulator-catalog.json"] {
            let written = try Data(contentsOf: dir.appendingPathComponent(name))
            let committed = try Data(contentsOf: repository.appendingPathComponent("Samples/\(name)"))
            #expect(written == committed, "\(name) differs from Samples/\(name)")
        }
    }

    /// The committed samples verify: keep them true.
    @Test func committedSamplesVerify() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let result = try run([
            "verify", "--root", repository.appendingPathComponent("Samples/sample-root.pem").path,
            repository.appendingPathComponent("Samples/sample-transaction.jws").path,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.json?["verified"] as? Bool == true)
    }

    static let appleVectors: URL = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/", !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            url.deleteLastPathComponent()
        }
        return url.deletingLastPathComponent().appendingPathComponent("shared/reference/apple-test-vectors")
    }()
}

/// `storekeeper report revenue`'s table: amounts printed exactly, free periods apart (issue 30, item 4).
@Suite("report revenue's table")
struct RevenueTableTests {
    @Test("a tenth of a cent is printed, never truncated; free units have their own column")
    func exactAmounts() throws {
        let json = """
            {"from": "2026-11-01", "to": "2026-11-02", "skipped": 0,
             "lines": [{"day": "2026-11-01", "productId": "p", "storefront": "USA", "currency": "USD", "units": 3, "freeUnits": 2,
                        "gross": 796, "tax": 0, "proceeds": 557, "refunds": -5, "refundedProceeds": 0, "net": 1234567, "exact": true}],
             "totals": []}
            """
        let table = try RevenueReportCommand.table(Data(json.utf8))
        let lines = table.split(separator: "\n").map(String.init)
        #expect(
            lines[1].split(separator: " ", omittingEmptySubsequences: true).map(String.init) == [
                "day", "product", "storefront", "currency", "units", "free", "gross", "proceeds", "refunds", "net",
            ]
        )
        #expect(
            lines[2].split(separator: " ", omittingEmptySubsequences: true).map(String.init) == [
                "2026-11-01", "p", "USA", "USD", "3", "2", "0.796", "0.557", "-0.005", "1234.567",
            ],
            "\(table)"
        )
    }
}
