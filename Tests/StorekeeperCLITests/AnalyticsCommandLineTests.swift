import Foundation
import StorekeeperTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CommandLineTests {
    /// `storekeeper demo --analytics-subscribers` seeds a fresh state directory with a year ending today, and
    /// `storekeeper report analytics`, `report cohorts` and `report renewal-rates` read it from the running demo: the
    /// figures the API answers, as text and as CSV; a bad metric and a second seeding of the same directory are
    /// refused with the reason.
    @Test func analyticsReportsReadASeededDemo() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("storekeeper-cli-analytics-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let port = ProcessLifecycleTests.freePort()
        let demo = Process()
        demo.executableURL = Self.binary
        demo.arguments = [
            "demo", "--port", "\(port)", "--simulator-port", "\(ProcessLifecycleTests.freePort())", "--state-dir", state.path,
            "--analytics-subscribers", "40",
        ]
        demo.standardOutput = FileHandle.nullDevice
        demo.standardError = FileHandle.nullDevice
        try ProcessLauncher.run(demo)
        defer {
            demo.terminate()
            for _ in 0..<600 where demo.isRunning { usleep(10_000) }
        }
        let server = "http://127.0.0.1:\(port)"
        // The year is played before the demo serves: its health answers once the seeding is done.
        var up = false
        for _ in 0..<3_000 where !up && demo.isRunning {
            let answer = try? await URLSession.shared.data(from: URL(string: server + "/health/live")!)
            up = (answer?.1 as? HTTPURLResponse)?.statusCode == 200
            if !up { try await Task.sleep(for: .milliseconds(100)) }
        }
        try #require(up, "the seeded demo started")
        let secrets = try JSONSerialization.jsonObject(with: Data(contentsOf: state.appendingPathComponent("demo-secrets.json"))) as? [String: Any]
        let key = try #require(secrets?["adminKey"] as? String)
        let environment = ["STOREKEEPER_ADMIN_KEY": key]

        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let formatter = DateFormatter()
        formatter.calendar = utc
        formatter.timeZone = utc.timeZone
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd"
        let to = formatter.string(from: Date().addingTimeInterval(86_400))
        let from = formatter.string(from: Date().addingTimeInterval(-366 * 86_400))
        let range = ["--from", from, "--to", to, "--server", server]

        // The API's monthly active subscriptions, and the command's.
        var request = URLRequest(url: URL(string: "\(server)/v1/admin/analytics/charts/active_subscriptions?from=\(from)&to=\(to)&interval=month")!)
        request.setValue(key, forHTTPHeaderField: "X-Admin-Key")
        let (body, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let chart = try #require((try JSONSerialization.jsonObject(with: body) as? [String: Any])?["chart"] as? [String: Any])
        let points = try #require(((chart["series"] as? [[String: Any]])?.first)?["points"] as? [[String: Any]])
        let served = points.map { "\($0["period"] ?? "")\t\($0["value"] ?? "")" }
        #expect(points.contains { ($0["value"] as? Int ?? 0) > 0 }, "the seeded year has subscribers: \(served)")
        let text = try await runAsync(["report", "analytics", "active_subscriptions", "--interval", "month"] + range, environment: environment)
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "active_subscriptions" && lines.dropFirst().first == "period\tactive_subscriptions", "\(text.stdout)")
        #expect(Array(lines.dropFirst(2)) == served, "the command prints the API's figures")

        let csv = try await runAsync(["report", "analytics", "mrr", "--csv", "--interval", "month"] + range, environment: environment)
        #expect(csv.status == 0 && csv.stdout.hasPrefix("metric,series,period,value,unit,currency,comparison"), "\(csv.stdout.prefix(200))")
        // CSV lines end in CRLF, which Swift reads as one Character: split on either.
        #expect(csv.stdout.split(whereSeparator: \.isNewline).count == points.count + 1, "a line per month")

        let cohorts = try await runAsync(
            ["report", "cohorts", "--from", String(from.prefix(7)), "--to", String(to.prefix(7)), "--server", server],
            environment: environment
        )
        #expect(cohorts.status == 0 && cohorts.stdout.hasPrefix("cohort\tsubscribers\tm1"), "\(cohorts.stdout) \(cohorts.stderr)")
        let cohortSizes = cohorts.stdout.split(separator: "\n").dropFirst().compactMap {
            $0.split(separator: "\t").dropFirst().first.flatMap { Int($0) }
        }
        #expect(cohortSizes.reduce(0, +) == 40, "every seeded subscriber is in a cohort: \(cohorts.stdout)")
        let rates = try await runAsync(["report", "renewal-rates", "--csv"] + range, environment: environment)
        #expect(rates.status == 0 && rates.stdout.hasPrefix("period,due,renewed,rate_basis_points"), "\(rates.stdout) \(rates.stderr)")

        let unknown = try await runAsync(["report", "analytics", "happiness"] + range, environment: environment)
        #expect(unknown.status != 0 && unknown.stderr.contains("unknown metric") && unknown.stderr.contains("active_subscriptions"))
        let again = try await runAsync(
            [
                "demo", "--port", "\(ProcessLifecycleTests.freePort())", "--simulator-port", "\(ProcessLifecycleTests.freePort())",
                "--state-dir", state.path, "--analytics-subscribers", "5",
            ]
        )
        #expect(again.status != 0 && again.stderr.contains("seeds a fresh state directory"), "\(again.stderr)")
    }
}
