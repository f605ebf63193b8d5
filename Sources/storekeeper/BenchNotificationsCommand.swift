import ArgumentParser
import Foundation
import StorekeeperBenchmarks
import StorekeeperServer

/// `storekeeper bench-notifications`: V2 notifications verified, stored and applied per second over HTTP.
struct BenchNotificationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-notifications",
        abstract: "Benchmark App Store Server Notifications V2: verified, stored durably, answered and applied, over HTTP on loopback.",
        discussion: """
            Example: swift build -c release --product storekeeper && \
            .build/release/storekeeper bench-notifications --users 1000 --months 20 --concurrency 64
            Notifications are users × (months + 1): a subscription each, renewing monthly. Throughput counts a \
            notification once applied. With --postgres-url the server uses PostgreSQL; otherwise a fresh SQLite file \
            (WAL, synchronous=FULL).
            """
    )

    @Option(help: "Subscribers.") var users = 1_000
    @Option(help: "Monthly renewals per subscriber.") var months = 20
    @Option(help: "Concurrent client connections (closed loop).") var concurrency = 64
    @Option(help: "Fixed arrival rate per second instead of closed loop.") var rate: Int?
    @Option(help: "Warm-up notifications before measuring.") var warmup = 1_000
    @Option(name: .customLong("postgres-url"), help: "Run on this PostgreSQL database instead of SQLite.") var postgresURL: String?
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        #if DEBUG
        FileHandle.standardError.write(Data("bench-notifications: debug build; use -c release for real figures\n".utf8))
        #endif
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let database: ServerConfiguration.Database = postgresURL.map { .postgres(url: $0) } ?? .sqlite(path: path)
        let result = try await NotificationBenchmark(
            options: .init(users: users, months: months, concurrency: concurrency, rate: rate, database: database, warmup: warmup)
        ).run()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(result), as: UTF8.self))
        } else {
            print(
                String(
                    format:
                        "%@: %d notifications applied in %.2f s = %.0f/s; answer latency p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.1f ms; failures %d; CPU %.3f ms per notification; steal %.0f%%",
                    postgresURL == nil ? "sqlite" : "postgres",
                    result.processed,
                    result.seconds,
                    result.perSecond,
                    result.p50Milliseconds,
                    result.p90Milliseconds,
                    result.p99Milliseconds,
                    result.maxMilliseconds,
                    result.failures,
                    result.cpuMillisecondsPerNotification,
                    result.stealPercent
                )
            )
        }
        if result.failures > 0 { throw ExitCode(1) }
    }
}
