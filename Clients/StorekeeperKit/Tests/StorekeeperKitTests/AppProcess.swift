#if os(Linux)
// Plays an iPhone through the StoreKit stand-in against a real `storekeeper demo`: Linux only.
import Foundation
import Testing

/// The example app (`StorekeeperKitExample`) as a separate process playing an iPhone against a demo: so a test can
/// kill it with SIGKILL mid-purchase, as iOS kills an app, and launch it again.
final class AppProcess: @unchecked Sendable {
    let process = Process()
    private let lock = NSLock()
    private var output = ""

    /// The example's executable: beside the test bundle (`swift test` builds it), else built now.
    static func executable() throws -> URL {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for directory in [beside, beside.deletingLastPathComponent()] {
            let candidate = directory.appendingPathComponent("StorekeeperKitExample")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let swift = Process()
        swift.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        swift.arguments = ["swift", "build", "--package-path", package.path, "--product", "StorekeeperKitExample"]
        try swift.run()
        swift.waitUntilExit()
        return package.appendingPathComponent(".build/debug/StorekeeperKitExample")
    }

    /// Launches the app on `device` (a folder: StoreKit's unfinished transactions and the SDK's journal) signed in
    /// to the simulator's `account`, with the guest's credential.
    init(demo: DemoServer, account: String, device: URL, guest: String, command: [String]) throws {
        process.executableURL = try Self.executable()
        process.arguments =
            [
                "--server", demo.serverURL.absoluteString, "--simulator", demo.simulatorURL.absoluteString,
                "--account", account, "--device", device.path, "--guest", guest,
                "--answer-key", demo.state.appendingPathComponent("answer-signing-public.pem").path,
            ] + command
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.withLock { self.output += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
    }

    var lines: [String] { lock.withLock { output.split(separator: "\n").map(String.init) } }

    /// Waits until the app printed `line` (or exited, or 60 s passed).
    func waitFor(_ line: String) async throws {
        for _ in 0..<600 {
            if lines.contains(line) { return }
            if !process.isRunning {
                try await Task.sleep(for: .milliseconds(100))
                if lines.contains(line) { return }
                break
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("the app never printed \(line); it printed \(lines)")
        throw CancellationError()
    }

    /// Kills it as iOS does: no chance to clean up.
    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        // Polled rather than `waitUntilExit()`, which blocks a thread of the test's cooperative pool.
        for _ in 0..<1000 where process.isRunning { usleep(10_000) }
        #expect(!process.isRunning, "the killed app is gone")
    }

    /// Waits for a normal exit and returns what it printed.
    func finish() async throws -> [String] {
        for _ in 0..<600 where process.isRunning { try await Task.sleep(for: .milliseconds(100)) }
        if process.isRunning { kill() }
        try await Task.sleep(for: .milliseconds(50))
        #expect(process.terminationStatus == 0, "the app failed: \(lines)")
        return lines
    }
}
#endif
