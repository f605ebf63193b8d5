import Foundation
import Hummingbird
import ServiceLifecycle
import StorekeeperServer
import Testing

/// A server with production intervals stops as soon as it is asked: no service sleeps through a graceful shutdown
/// (issue 30 item 16: `serve` took 3-5 s to exit on SIGTERM, the catalog's reload wait).
@Suite struct ShutdownTests {
    @Test("every service ends at a graceful shutdown, whatever its interval")
    func gracefulShutdownIsPrompt() async throws {
        try await ServerHarness.withDatabase(.sqlite) { database in
            var configuration = try ServerHarness.serverConfiguration(simulatorURL: "http://127.0.0.1:9", database: database)
            configuration.catalogRefreshInterval = .seconds(3_600)
            configuration.lifecycle = LifecycleConfiguration()
            configuration.reports = nil
            let key = "shutdown-\(UUID().uuidString)"
            let app = try await StorekeeperServer.buildApplication(
                configuration: configuration,
                logger: ServerHarness.quietLogger("shutdown"),
                onServerRunning: { port in PortRegistry.shared.publish(key, port) }
            )
            let group = ServiceGroup(services: [app], gracefulShutdownSignals: [], logger: ServerHarness.quietLogger("group"))
            let stopped = try await withThrowingTaskGroup(of: Bool.self) { tasks in
                tasks.addTask {
                    try await group.run()
                    return true
                }
                _ = try await PortRegistry.shared.wait(key)
                // Past the first reload's start, so a reload wait is under way when the shutdown comes.
                try await Task.sleep(for: .milliseconds(300))
                await group.triggerGracefulShutdown()
                // Far less than the hour the catalog waits between reloads: a service sleeping through the shutdown
                // loses this race.
                tasks.addTask {
                    try await Task.sleep(for: .seconds(60))
                    return false
                }
                let first = try await tasks.next() ?? false
                tasks.cancelAll()
                return first
            }
            #expect(stopped, "the server was still running a minute after its graceful shutdown began")
        }
    }
}
