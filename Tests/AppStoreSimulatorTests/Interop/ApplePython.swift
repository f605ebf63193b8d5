import Foundation
import StorekeeperTestSupport

/// Apple's app-store-server-library for Python on this machine: whether it imports, whether CI demands it
/// (`STOREKEEPER_REQUIRE_APPLE_PYTHON=1`), and running scripts with it.
enum ApplePython {
    /// CI installs the library and sets this, so a missing library fails instead of skipping.
    static let required = ProcessInfo.processInfo.environment["STOREKEEPER_REQUIRE_APPLE_PYTHON"] == "1"

    /// Whether `import appstoreserverlibrary` works.
    static let available: Bool = {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import appstoreserverlibrary"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? ProcessLauncher.run(probe)) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()

    /// Run the interop tests: the library is there, or it must be (and its absence is then a failure).
    static var shouldRun: Bool { available || required }

    /// The repository's `Tests/Interop` directory.
    static let interopDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Interop")

    /// What a script run left behind.
    struct Outcome: Sendable {
        var status: Int32
        var output: String
    }

    /// Runs `python3 script arguments…` without blocking a concurrency thread (the simulator it talks to answers
    /// on the same pool); output goes to a file, so a chatty script cannot stall on a full pipe.
    static func run(script: URL, arguments: [String], timeout: Duration = .seconds(240)) async throws -> Outcome {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("apple-python-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path] + arguments
        process.standardOutput = handle
        process.standardError = handle
        // A script that hangs is stopped, so the test fails with its output instead of timing out silently.
        let watchdog = Task {
            try await Task.sleep(for: timeout)
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
        return Outcome(status: status, output: (try? String(contentsOf: log, encoding: .utf8)) ?? "")
    }
}
