import ArgumentParser
import Foundation
import StorekeeperBenchmarks
import StorekeeperServer

/// `storekeeper bench-retention`: Apple's realtime retention requests answered per second, and how fast.
struct BenchRetentionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-retention",
        abstract: "Benchmark Retention Messaging's realtime endpoint: signed requests verified, history read, a rule chosen, offers signed.",
        discussion: """
            Example: swift build -c release --product storekeeper && \
            .build/release/storekeeper bench-retention --subscribers 1000 --requests 20000 --rate 500
            Half the requests get a promotional offer signed with the app's key, half a message. Apple allows 700 ms \
            per answer; the goal is p99 ≤ 20 ms. With --postgres-url the server uses PostgreSQL; otherwise a fresh \
            SQLite file.
            """
    )

    @Option(help: "Subscribers (each subscription delivered first).") var subscribers = 1_000
    @Option(help: "Realtime requests.") var requests = 20_000
    @Option(help: "Concurrent client connections.") var concurrency = 32
    @Option(help: "Fixed arrival rate per second instead of closed loop.") var rate: Int?
    @Option(name: .customLong("postgres-url"), help: "Run on this PostgreSQL database instead of SQLite.") var postgresURL: String?
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        #if DEBUG
        FileHandle.standardError.write(Data("bench-retention: debug build; use -c release for real figures\n".utf8))
        #endif
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let database: ServerConfiguration.Database = postgresURL.map { .postgres(url: $0) } ?? .sqlite(path: path)
        let result = try await RetentionBenchmark(
            options: .init(subscribers: subscribers, requests: requests, concurrency: concurrency, rate: rate, database: database)
        ).run()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(result), as: UTF8.self))
        } else {
            print(
                String(
                    format:
                        "%@: %d retention requests answered in %.2f s = %.0f/s; latency p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.1f ms; failures %d; CPU %.3f ms per request; steal %.0f%%",
                    postgresURL == nil ? "sqlite" : "postgres",
                    result.requests,
                    result.seconds,
                    result.perSecond,
                    result.p50Milliseconds,
                    result.p90Milliseconds,
                    result.p99Milliseconds,
                    result.maxMilliseconds,
                    result.failures,
                    result.cpuMillisecondsPerRequest,
                    result.stealPercent
                )
            )
        }
        if result.failures > 0 { throw ExitCode(1) }
    }
}
