import ArgumentParser
import Foundation
import StorekeeperBenchmarks
import StorekeeperServer

/// `storekeeper bench-analytics`: a simulated year of subscribers, the server's analytics held against the simulator's.
struct BenchAnalyticsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-analytics",
        abstract:
            "Feed a simulated year of subscribers through the server and compare every analytics chart and cohort with the simulator's own figures.",
        discussion: """
            Example: swift build -c release --product storekeeper && \
            .build/release/storekeeper bench-analytics --subscribers 10000
            Subscribers join over the first half of the range on the sample catalog's monthly (with a free trial), \
            monthly and yearly plans, in the USA and China; some cancel and come back, some stop paying (recovering in \
            grace, in billing retry, or never), some are refunded, some upgrade. Every purchase goes through an order \
            and every renewal, expiry and refund reaches the server as a signed notification over loopback HTTP. At \
            the end every day of every chart (counts, and money per currency) and every cohort's retention must equal \
            what the simulator computes from its own records, and the charts must agree day by day with Apple's \
            Subscription Event report within README's documented differences; any difference exits 1. With \
            --postgres-url the server uses PostgreSQL; otherwise a fresh SQLite file.
            """
    )

    @Option(help: "Subscribers.") var subscribers = 1_000
    @Option(help: "Simulated days (subscribers join during the first half).") var days = 365
    @Option(help: "Seed of the scenario (the same seed plays the same year).") var seed: UInt64 = 20_261_127
    @Option(name: .customLong("postgres-url"), help: "Run on this PostgreSQL database instead of SQLite.") var postgresURL: String?
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        guard (1...1_000_000).contains(subscribers) else { throw ValidationError("--subscribers is 1 to 1000000") }
        guard (2...732).contains(days) else { throw ValidationError("--days is 2 to 732 (the charts' longest range)") }
    }

    func run() async throws {
        #if DEBUG
        FileHandle.standardError.write(Data("bench-analytics: debug build; use -c release for real figures\n".utf8))
        #endif
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let database: ServerConfiguration.Database = postgresURL.map { .postgres(url: $0) } ?? .sqlite(path: path)
        let result = try await AnalyticsBenchmark(
            options: .init(
                subscribers: subscribers,
                days: days,
                seed: seed,
                database: database,
                storekeeperCatalog: Data(SampleCatalogs.storekeeper.utf8),
                simulatorCatalog: Data(SampleCatalogs.simulator.utf8)
            )
        ).run()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(result), as: UTF8.self))
        } else {
            print(
                String(
                    format:
                        "%@: %d subscribers over %d days, %d notifications, fed in %.1f s, rolled up in %.1f s; %d chart points compared, %d differ; %d cohort figures compared, %d differ; %d charts answered in %.1f ms on average, %.1f ms at most",
                    postgresURL == nil ? "sqlite" : "postgres",
                    result.subscribers,
                    result.days,
                    result.notifications,
                    result.feedSeconds,
                    result.catchUpSeconds,
                    result.pointsCompared,
                    result.pointMismatches,
                    result.cohortFiguresCompared,
                    result.cohortMismatches,
                    result.chartRequests,
                    result.chartMillisecondsMean,
                    result.chartMillisecondsMax
                )
            )
            print("the year's totals: " + result.totals.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            for mismatch in result.firstMismatches { print("  " + mismatch) }
            print("against Apple's Subscription Event report, day by day:")
            for line in result.eventReport {
                print(
                    "  \(line.name): Storekeeper \(line.storekeeper), Apple \(line.apple); \(line.daysDiffering) of \(line.daysCompared) days differ"
                        + (line.firstDifferences.isEmpty ? "" : " (" + line.firstDifferences.joined(separator: "; ") + ")")
                )
            }
        }
        if result.pointMismatches > 0 || result.cohortMismatches > 0 || !result.firstMismatches.isEmpty
            || result.eventReport.contains(where: { $0.daysDiffering > 0 })
        {
            throw ExitCode(1)
        }
    }
}
