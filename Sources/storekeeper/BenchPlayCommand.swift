import ArgumentParser
import Foundation
import StorekeeperBenchmarks
import StorekeeperServer

/// `storekeeper bench-play`: Google Play purchases and real-time notifications per second, beside the App Store's in
/// the same run.
struct BenchPlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-play",
        abstract: "Benchmark Google Play purchases and real-time notifications beside the App Store's, in one run.",
        discussion: """
            Example: swift build -c release --product storekeeper && .build/release/storekeeper bench-play --purchases 5000
            Each part runs on a fresh SQLite file (or --postgres-url): App Store purchases (bench-purchases), Google Play \
            purchases (the Play Developer API asked, delivered, consumed after the commit), App Store notifications \
            (bench-notifications, about as many), and the Play purchases' real-time notifications (pushed with signed \
            OIDC tokens, confirmed with the API, applied), then the month's Play sales reconciled against the \
            simulator's earnings report once its clock has left the month. The Play simulator runs in this process on a socket: its \
            work shares the cores. --skip-app-store runs the Play parts only.
            """
    )

    @Option(help: "Measured purchases per store (each a new transaction).") var purchases = 5_000
    @Option(help: "Concurrent client connections (closed loop).") var concurrency = 32
    @Option(name: .customLong("postgres-url"), help: "Run on this PostgreSQL database instead of SQLite.") var postgresURL: String?
    @Flag(name: .customLong("skip-app-store"), help: "Run only the Google Play parts.") var skipAppStore = false
    @Flag(help: "Print JSON.") var json = false

    struct Report: Encodable {
        var appStorePurchases: PurchaseBenchmark.Result?
        var appStoreNotifications: NotificationBenchmark.Result?
        var googlePlay: PlayBenchmark.Result
    }

    func run() async throws {
        #if DEBUG
        FileHandle.standardError.write(Data("bench-play: debug build; use -c release for real figures\n".utf8))
        #endif
        func database() -> (ServerConfiguration.Database, () -> Void) {
            if let postgresURL { return (.postgres(url: postgresURL), {}) }
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString).sqlite").path
            return (.sqlite(path: path), { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } })
        }
        var report = Report(
            googlePlay: try await {
                let (db, clean) = database()
                defer { clean() }
                return try await PlayBenchmark(options: .init(purchases: purchases, concurrency: concurrency, database: db)).run()
            }()
        )
        if !skipAppStore {
            let (purchaseDB, cleanPurchases) = database()
            defer { cleanPurchases() }
            report.appStorePurchases = try await PurchaseBenchmark(
                options: .init(purchases: purchases, concurrency: concurrency, rate: nil, database: purchaseDB, warmup: 500)
            ).run()
            let (notificationDB, cleanNotifications) = database()
            defer { cleanNotifications() }
            // A subscription each and eleven renewals: about as many notifications as Play's.
            report.appStoreNotifications = try await NotificationBenchmark(
                options: .init(users: max(1, purchases / 12), months: 11, concurrency: concurrency, rate: nil, database: notificationDB, warmup: 500)
            ).run()
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            let kind = postgresURL == nil ? "sqlite" : "postgres"
            let play = report.googlePlay
            if let apple = report.appStorePurchases {
                print(
                    String(
                        format: "%@ App Store purchases: %d in %.2f s = %.0f/s; p50 %.2f ms, p99 %.2f ms",
                        kind,
                        apple.purchases,
                        apple.seconds,
                        apple.perSecond,
                        apple.p50Milliseconds,
                        apple.p99Milliseconds
                    )
                )
            }
            print(
                String(
                    format: "%@ Google Play purchases: %d in %.2f s = %.0f/s; p50 %.2f ms, p99 %.2f ms; CPU %.2f ms each; consumed %d",
                    kind,
                    play.purchases,
                    play.purchaseSeconds,
                    play.purchasesPerSecond,
                    play.purchaseP50Milliseconds,
                    play.purchaseP99Milliseconds,
                    play.cpuMillisecondsPerPurchase,
                    play.consumed
                )
            )
            if let apple = report.appStoreNotifications {
                print(
                    String(
                        format: "%@ App Store notifications: %d applied in %.2f s = %.0f/s; answer p50 %.2f ms, p99 %.2f ms; CPU %.2f ms each",
                        kind,
                        apple.notifications,
                        apple.seconds,
                        apple.perSecond,
                        apple.p50Milliseconds,
                        apple.p99Milliseconds,
                        apple.cpuMillisecondsPerNotification
                    )
                )
            }
            print(
                String(
                    format: "%@ Google Play notifications: %d applied in %.2f s = %.0f/s; answer p50 %.2f ms, p99 %.2f ms; CPU %.2f ms each",
                    kind,
                    play.notifications,
                    play.notificationSeconds,
                    play.notificationsPerSecond,
                    play.pushP50Milliseconds,
                    play.pushP99Milliseconds,
                    play.cpuMillisecondsPerNotification
                )
            )
            print(
                String(
                    format: "%@ Google Play month reconciled against its earnings report: %d orders in %.2f s, %d findings",
                    kind,
                    play.reconciledOrders,
                    play.reconcileSeconds,
                    play.reconcileFindings
                )
            )
            print("failures: \(play.failures + (report.appStorePurchases?.failures ?? 0) + (report.appStoreNotifications?.failures ?? 0))")
        }
        if report.googlePlay.failures > 0 || (report.appStorePurchases?.failures ?? 0) > 0 || (report.appStoreNotifications?.failures ?? 0) > 0 {
            throw ExitCode(1)
        }
    }
}
