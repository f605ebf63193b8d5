import ArgumentParser
import Foundation
import StorekeeperBenchmarks

/// `storekeeper bench`: measure verification speed on this machine (build with `-c release`).
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmark JWS verification on an Apple-shaped chain (run a release build).",
        discussion: "Example: swift run -c release storekeeper bench --iterations 50000"
    )

    @Option(help: "Warm-cache verifications per figure.")
    var iterations = 20_000

    @Option(name: .customLong("cold-iterations"), help: "Verifications with a fresh verifier (no cache).")
    var coldIterations = 300

    @Option(help: "Threads for the throughput figure.")
    var threads = 2

    @Option(help: "Rounds per figure; the best and the median round are reported.")
    var rounds = 5

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func run() async throws {
        #if DEBUG
        FileHandle.standardError.write(Data("storekeeper bench: this is a debug build; figures are not representative (use -c release)\n".utf8))
        #endif
        let benchmark = VerificationBenchmark(iterations: iterations, coldIterations: coldIterations, threads: threads, rounds: rounds)
        let figures = try await benchmark.run()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(figures), as: UTF8.self))
            return
        }
        for figure in figures {
            let name = figure.name.padding(toLength: 58, withPad: " ", startingAt: 0)
            print(
                "\(name) threads=\(figure.threads)  best \(String(format: "%8.2f", figure.microsecondsPerOperation)) µs/op  median \(String(format: "%8.2f", figure.medianMicrosecondsPerOperation)) µs/op  \(String(format: "%9.0f", figure.operationsPerSecond)) op/s"
            )
        }
        let warm = figures.filter { $0.name.hasPrefix("verify+decode transaction, warm") }
        if let one = warm.first(where: { $0.threads == 1 }), let many = warm.first(where: { $0.threads > 1 }) {
            print(
                String(
                    format: "scaling: %.2fx on %d threads (best rounds), %.2fx (median rounds)",
                    many.operationsPerSecond / one.operationsPerSecond,
                    many.threads,
                    one.medianMicrosecondsPerOperation / many.medianMicrosecondsPerOperation
                )
            )
        }
    }
}
