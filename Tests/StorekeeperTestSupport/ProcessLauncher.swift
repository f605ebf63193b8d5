import Foundation

/// Starts the tests' child processes one at a time across the whole test bundle: Foundation's `Process.run()` on
/// Linux crashed (a bad pointer in memcpy) with launches racing between suites that run in parallel.
public enum ProcessLauncher {
    private static let launching = NSLock()

    /// `process.run()`, never at the same moment as another test's launch.
    public static func run(_ process: Process) throws {
        try launching.withLock { try process.run() }
    }
}
