import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import StorekeeperCore

/// Reads one admin analytics resource (`/v1/admin/analytics/...`) with the key in `STOREKEEPER_ADMIN_KEY`.
enum AnalyticsFetch {
    static func get(server: String, path: String, query: [(String, String?)], csv: Bool, command: String) async throws -> Data {
        guard let key = ProcessInfo.processInfo.environment["STOREKEEPER_ADMIN_KEY"], !key.isEmpty else {
            throw ValidationError("set STOREKEEPER_ADMIN_KEY to an admin key (auth.adminKeys)")
        }
        var components = URLComponents(string: server)
        components?.path = path
        components?.queryItems = query.compactMap { name, value in value.map { URLQueryItem(name: name, value: $0) } }
        guard let url = components?.url, url.scheme == "http" || url.scheme == "https" else {
            throw ValidationError("--server must be an http(s) address")
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.headers.add(name: "X-Admin-Key", value: key)
        request.headers.add(name: "Accept", value: csv ? "text/csv" : "application/json")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(300))
        let body = try await response.body.collect(upTo: 64 << 20)
        guard response.status == .ok else {
            FileHandle.standardError.write(Data("storekeeper report \(command): \(response.status.code) \(String(buffer: body))\n".utf8))
            throw ExitCode(1)
        }
        return Data(body.readableBytesView)
    }

    /// Milliunits as an exact decimal (9990 is 9.99; 796 is 0.796).
    static func money(_ milliunits: Int64) -> String {
        let sign = milliunits < 0 ? "-" : ""
        let magnitude = milliunits.magnitude
        let fraction = magnitude % 1000
        let text = fraction % 10 == 0 ? String(format: "%02llu", fraction / 10) : String(format: "%03llu", fraction)
        return "\(sign)\(magnitude / 1000).\(text)"
    }
}

/// The filters every analytics report takes.
struct AnalyticsFilterOptions: ParsableArguments {
    @Option(help: "Only this app (bundle id or package name).") var app: String?
    @Option(help: "Only this store: appStore or googlePlay.") var store: String?
    @Option(help: "Only this product id.") var product: String?
    @Option(help: "Only this storefront (USA, CHN, ...).") var storefront: String?
    @Option(help: "Only this offer (introductory, promotional:ID, offer_code:ID, win_back:ID, retention:ID).") var offer: String?
    @Option(help: "Only subscriptions paying in this currency, money unconverted (default: the reporting currency).") var currency: String?

    var query: [(String, String?)] {
        [("app", app), ("store", store), ("product", product), ("storefront", storefront), ("offer", offer), ("currency", currency)]
    }
}

/// `storekeeper report analytics METRIC --from D --to D`: one chart's figures.
struct AnalyticsChartReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analytics",
        abstract: "One subscription analytics chart: MRR, ARR, active subscriptions and trials, new, churn, conversion, revenue, ...",
        discussion: """
            Reads GET /v1/admin/analytics/charts/METRIC from a running server with the admin key in STOREKEEPER_ADMIN_KEY. \
            METRIC is one of mrr, arr, active_subscriptions, active_trials, new_subscriptions, reactivations, renewals, churn, \
            trial_starts, trial_conversions, conversion_rate, revenue, refunds, refund_rate, arpu, arppu (README's \
            "Subscription analytics" defines each). Money prints as exact decimals of the reporting currency; CSV gives \
            milliunits and ratios in basis points. Example: STOREKEEPER_ADMIN_KEY=... storekeeper report analytics mrr \
            --from 2026-01-01 --to 2027-01-01 --interval month --compare
            """
    )

    @Argument(help: "The metric.") var metric: String
    @Option(help: "The server's address.") var server = "http://127.0.0.1:8080"
    @Option(help: "First day, YYYY-MM-DD (UTC).") var from: String
    @Option(help: "The day after the last, YYYY-MM-DD (UTC).") var to: String
    @Option(help: "day, week or month.") var interval = "day"
    @Option(help: "Break down by app, store, product, storefront, offer or currency.") var by: String?
    @Flag(help: "Add the range of the same length before --from.") var compare = false
    @OptionGroup var filters: AnalyticsFilterOptions
    @Flag(help: "Print CSV.") var csv = false

    func validate() throws {
        guard AnalyticsChartMetric(rawValue: metric) != nil else {
            throw ValidationError(
                "unknown metric \"\(metric)\": one of \(AnalyticsChartMetric.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
    }

    func run() async throws {
        let data = try await AnalyticsFetch.get(
            server: server,
            // validate() holds the metric to plain names, and URLComponents encodes the path itself: encoding it here
            // too sent `active%255Fsubscriptions`.
            path: "/v1/admin/analytics/charts/\(metric)",
            query: [("from", from), ("to", to), ("interval", interval), ("by", by), ("compare", compare ? "true" : nil)] + filters.query,
            csv: csv,
            command: "analytics"
        )
        if csv {
            FileHandle.standardOutput.write(data)
            return
        }
        print(try Self.text(data), terminator: "")
    }

    struct Point: Decodable {
        var period: String
        var value: Int64
    }
    struct Series: Decodable {
        var name: String
        var points: [Point]
    }
    struct Chart: Decodable {
        var metric: String
        var unit: String
        var currency: String
        var series: [Series]
        var missingRates: [String]
    }
    struct Answer: Decodable {
        var chart: Chart
        var previous: Chart?
        var pending: Int
    }

    static func text(_ json: Data) throws -> String {
        let answer = try JSONDecoder().decode(Answer.self, from: json)
        func value(_ v: Int64, _ chart: Chart) -> String {
            switch chart.unit {
            case "milliunits": AnalyticsFetch.money(v)
            case "basis_points": String(format: "%.2f%%", Double(v) / 100)
            default: String(v)
            }
        }
        var out = "\(answer.chart.metric)\(answer.chart.unit == "milliunits" ? " (\(answer.chart.currency))" : "")\n"
        let names = answer.chart.series.map { $0.name.isEmpty ? answer.chart.metric : $0.name }
        out += (["period"] + names + (answer.previous == nil ? [] : ["previous"])).joined(separator: "\t") + "\n"
        let count = answer.chart.series.first?.points.count ?? 0
        for index in 0..<count {
            var row = [answer.chart.series[0].points[index].period]
            row += answer.chart.series.map { value($0.points[index].value, answer.chart) }
            if let previous = answer.previous, let point = previous.series.first?.points.dropFirst(index).first {
                row.append(value(point.value, previous))
            }
            out += row.joined(separator: "\t") + "\n"
        }
        if !answer.chart.missingRates.isEmpty { out += "left out (no exchange rate): \(answer.chart.missingRates.joined(separator: ", "))\n" }
        if answer.pending > 0 { out += "\(answer.pending) changes not rolled up yet\n" }
        return out
    }
}

/// `storekeeper report cohorts --from YYYY-MM --to YYYY-MM`: retention and realized lifetime value by cohort.
struct CohortReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cohorts",
        abstract: "Cohorts by month of first purchase: subscribers, still subscribed month by month, realized lifetime value.",
        discussion: """
            Reads GET /v1/admin/analytics/cohorts with the admin key in STOREKEEPER_ADMIN_KEY. The table shows the share \
            still subscribed at months 1, 3, 6 and 12 and the realized LTV per subscriber then (blank: not every member \
            is that old yet). Example: storekeeper report cohorts --from 2026-01 --to 2027-01
            """
    )

    @Option(help: "The server's address.") var server = "http://127.0.0.1:8080"
    @Option(help: "First cohort month, YYYY-MM.") var from: String
    @Option(help: "The month after the last, YYYY-MM.") var to: String
    @OptionGroup var filters: AnalyticsFilterOptions
    @Flag(help: "Print CSV (one line per cohort and age).") var csv = false

    func run() async throws {
        let data = try await AnalyticsFetch.get(
            server: server,
            path: "/v1/admin/analytics/cohorts",
            query: [("from", from), ("to", to)] + filters.query,
            csv: csv,
            command: "cohorts"
        )
        if csv {
            FileHandle.standardOutput.write(data)
            return
        }
        print(try Self.text(data), terminator: "")
    }

    struct Row: Decodable {
        var cohort: String
        var subscribers: Int64
        var active: [Int64]
        var lifetimeValue: [Int64]
        var completeAges: Int
    }
    struct Answer: Decodable {
        var currency: String
        var cohorts: [Row]
    }

    static func text(_ json: Data) throws -> String {
        let answer = try JSONDecoder().decode(Answer.self, from: json)
        var out = "cohort\tsubscribers\tm1\tm3\tm6\tm12\tltv1\tltv3\tltv6\tltv12 (\(answer.currency))\n"
        for row in answer.cohorts {
            let ages = [1, 3, 6, 12]
            let shares = ages.map { age in
                age < row.completeAges && row.subscribers > 0 ? String(format: "%.1f%%", Double(row.active[age]) * 100 / Double(row.subscribers)) : ""
            }
            let ltv = ages.map { age in age <= row.completeAges ? AnalyticsFetch.money(row.lifetimeValue[age - 1]) : "" }
            out += ([row.cohort, String(row.subscribers)] + shares + ltv).joined(separator: "\t") + "\n"
        }
        return out
    }
}

/// `storekeeper report renewal-rates --from D --to D`: renewal rate by paid period number.
struct RenewalRatesReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "renewal-rates",
        abstract: "Of the paid periods number n that ended in the range, how many renewed.",
        discussion: "Reads GET /v1/admin/analytics/renewal-rates with the admin key in STOREKEEPER_ADMIN_KEY."
    )

    @Option(help: "The server's address.") var server = "http://127.0.0.1:8080"
    @Option(help: "First day, YYYY-MM-DD (UTC).") var from: String
    @Option(help: "The day after the last, YYYY-MM-DD (UTC).") var to: String
    @OptionGroup var filters: AnalyticsFilterOptions
    @Flag(help: "Print CSV.") var csv = false

    func run() async throws {
        let data = try await AnalyticsFetch.get(
            server: server,
            path: "/v1/admin/analytics/renewal-rates",
            query: [("from", from), ("to", to)] + filters.query,
            csv: csv,
            command: "renewal-rates"
        )
        if csv {
            FileHandle.standardOutput.write(data)
            return
        }
        struct Line: Decodable {
            var period: Int
            var due: Int64
            var renewed: Int64
            var rate: Int64
        }
        struct Answer: Decodable { var lines: [Line] }
        let answer = try JSONDecoder().decode(Answer.self, from: data)
        var out = "period\tended\trenewed\trate\n"
        for line in answer.lines {
            out += "\(line.period)\t\(line.due)\t\(line.renewed)\t\(String(format: "%.2f%%", Double(line.rate) / 100))\n"
        }
        print(out, terminator: "")
    }
}
