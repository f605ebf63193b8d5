import ArgumentParser
import Foundation
import StorekeeperBenchmarks
import StorekeeperServer

/// `storekeeper bench-purchases`: purchase submissions per second through HTTP on loopback.
struct BenchPurchasesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-purchases",
        abstract: "Benchmark purchase submission (verify, deliver, durable commit, answer) over HTTP on loopback.",
        discussion: """
            Example: swift build -c release --product storekeeper && \
            .build/release/storekeeper bench-purchases --purchases 20000 --concurrency 64
            With --postgres-url the server uses PostgreSQL; otherwise a fresh SQLite file (WAL, synchronous=FULL). \
            With --history N and --read-load, N production purchases spread over the past year are delivered first, \
            and a year's revenue report and the console overview's reads (30 days of revenue and subscription \
            analytics) run in a loop while the purchases are measured: compare the latency with a run without \
            --read-load.
            """
    )

    @Option(help: "Measured purchases (each a new transaction).") var purchases = 20_000
    @Option(help: "Concurrent client connections (closed loop).") var concurrency = 64
    @Option(help: "Fixed arrival rate per second instead of closed loop (for latency at a given load).") var rate: Int?
    @Option(help: "Warm-up purchases before measuring.") var warmup = 1_000
    @Option(name: .customLong("postgres-url"), help: "Run on this PostgreSQL database instead of SQLite.") var postgresURL: String?
    @Option(name: .customLong("sqlite-path"), help: "SQLite file (default: a fresh temporary file).") var sqlitePath: String?
    @Option(help: "Production purchases spread over the past year, delivered before measuring.") var history = 0
    @Flag(name: .customLong("read-load"), help: "Run a year's revenue report and the console overview's reads in a loop while measuring.")
    var readLoad = false
    @Option(name: .customLong("sqlite-readers"), help: "SQLite's read-only connections for reports (0: reads on the writer's connection).")
    var sqliteReaders = 2
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        #if DEBUG
        FileHandle.standardError.write(Data("bench-purchases: debug build; use -c release for real figures\n".utf8))
        #endif
        let path = sqlitePath ?? FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString).sqlite").path
        defer { if sqlitePath == nil { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } } }
        let database: ServerConfiguration.Database = postgresURL.map { .postgres(url: $0) } ?? .sqlite(path: path)
        let result = try await PurchaseBenchmark(
            options: .init(
                purchases: purchases,
                concurrency: concurrency,
                rate: rate,
                database: database,
                warmup: warmup,
                history: history,
                readLoad: readLoad,
                sqliteReaders: sqliteReaders
            )
        ).run()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(result), as: UTF8.self))
        } else {
            print(
                String(
                    format: "%@: %d purchases in %.2f s = %.0f/s; latency p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.1f ms; failures %d%@",
                    postgresURL == nil ? "sqlite" : "postgres",
                    result.purchases,
                    result.seconds,
                    result.perSecond,
                    result.p50Milliseconds,
                    result.p90Milliseconds,
                    result.p99Milliseconds,
                    result.maxMilliseconds,
                    result.failures,
                    readLoad ? "; meanwhile \(result.yearReports) year reports, \(result.overviews) overviews" : ""
                )
            )
        }
        if result.failures > 0 { throw ExitCode(1) }
    }
}
