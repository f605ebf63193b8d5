import ArgumentParser
import Foundation
import StorekeeperBenchmarks
import StorekeeperServer

/// `storekeeper bench-webhooks`: events delivered per second to a loopback backend, and submit-to-receipt latency.
struct BenchWebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-webhooks",
        abstract: "Benchmark event delivery to the app's backend (a loopback receiver in this process).",
        discussion: """
            Builds a backlog of --backlog purchases with the endpoint paused, resumes it and times the drain \
            (events/s); then submits --purchases at --rate per second with the endpoint running and measures, for \
            each purchase, the time from its submission (and from its answer, the commit) to the backend receiving \
            its purchase.delivered event.
            Example: swift build -c release --product storekeeper && \
            .build/release/storekeeper bench-webhooks --backlog 20000 --purchases 10000 --rate 1000
            """
    )

    @Option(help: "Purchases queued while paused, then drained.") var backlog = 20_000
    @Option(help: "Purchases submitted at --rate with the endpoint running.") var purchases = 10_000
    @Option(help: "Arrival rate per second in the latency run.") var rate = 1_000
    @Option(help: "Deliveries in flight at once (the endpoint's concurrency).") var concurrency = 64
    @Option(name: .customLong("postgres-url"), help: "Run on this PostgreSQL database instead of SQLite.") var postgresURL: String?
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        #if DEBUG
        FileHandle.standardError.write(Data("bench-webhooks: debug build; use -c release for real figures\n".utf8))
        #endif
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let database: ServerConfiguration.Database = postgresURL.map { .postgres(url: $0) } ?? .sqlite(path: path)
        let result = try await WebhookBenchmark(
            options: .init(backlog: backlog, purchases: purchases, rate: rate, concurrency: concurrency, database: database)
        ).run()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(result), as: UTF8.self))
        } else {
            print(
                String(
                    format:
                        "%@: drained %d events in %.2f s = %.0f events/s; at %d purchases/s: submit→receipt p50 %.1f ms, p99 %.1f ms, max %.1f ms; answer→receipt p50 %.1f ms, p99 %.1f ms; lost %d",
                    postgresURL == nil ? "sqlite" : "postgres",
                    result.backlogEvents,
                    result.drainSeconds,
                    result.eventsPerSecond,
                    result.rate,
                    result.p50Milliseconds,
                    result.p99Milliseconds,
                    result.maxMilliseconds,
                    result.answerToReceiptP50Milliseconds,
                    result.answerToReceiptP99Milliseconds,
                    result.lost
                )
            )
        }
        if result.lost > 0 { throw ExitCode(1) }
    }
}
