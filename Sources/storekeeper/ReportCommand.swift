import AppStoreWire
import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// `storekeeper report`: reports read from a running server's admin API.
struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Reports from a running server (admin API).",
        subcommands: [
            RevenueReportCommand.self, SubscriptionReportCommand.self, AnalyticsChartReportCommand.self, CohortReportCommand.self,
            RenewalRatesReportCommand.self,
        ]
    )
}

/// `storekeeper report revenue --from D --to D`: revenue by day, product, storefront and currency.
struct RevenueReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revenue",
        abstract: "Revenue by day, product, storefront and currency: gross, tax, estimated proceeds, refunds, net.",
        discussion: """
            Reads GET /v1/admin/reports/revenue from a running server with the admin key in STOREKEEPER_ADMIN_KEY \
            (kept off the command line, where other users can see it). The table prints amounts exactly, never rounded: two \
            decimals, or three when a tenth of a cent is there (0.796); CSV gives milliunits (9990 is 9.99). Units are \
            paid transactions; free periods (trials, free offer codes) are counted apart, as Apple's reports leave them out. \
            Example: STOREKEEPER_ADMIN_KEY=... storekeeper report revenue --from 2026-11-01 --to 2026-12-01 --csv
            """
    )

    @Option(help: "The server's address.") var server = "http://127.0.0.1:8080"
    @Option(help: "First day, YYYY-MM-DD (UTC).") var from: String
    @Option(help: "The day after the last, YYYY-MM-DD (UTC).") var to: String
    @Flag(help: "Print CSV (a header row, then one line per day × product × storefront × currency).") var csv = false

    func run() async throws {
        guard let key = ProcessInfo.processInfo.environment["STOREKEEPER_ADMIN_KEY"], !key.isEmpty else {
            throw ValidationError("set STOREKEEPER_ADMIN_KEY to an admin key (auth.adminKeys)")
        }
        var components = URLComponents(string: server)
        components?.path = "/v1/admin/reports/revenue"
        components?.queryItems = [URLQueryItem(name: "from", value: from), URLQueryItem(name: "to", value: to)]
        guard let url = components?.url, url.scheme == "http" || url.scheme == "https" else {
            throw ValidationError("--server must be an http(s) address")
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.headers.add(name: "X-Admin-Key", value: key)
        request.headers.add(name: "Accept", value: csv ? "text/csv" : "application/json")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(300))
        let body = try await response.body.collect(upTo: 256 << 20)
        guard response.status == .ok else {
            FileHandle.standardError.write(Data("storekeeper report revenue: \(response.status.code) \(String(buffer: body))\n".utf8))
            throw ExitCode(1)
        }
        if csv {
            FileHandle.standardOutput.write(Data(body.readableBytesView))
            return
        }
        print(try Self.table(Data(body.readableBytesView)))
    }

    /// The totals per currency, then the lines, as aligned text.
    static func table(_ json: Data) throws -> String {
        struct Line: Decodable {
            var day: String
            var productId: String
            var storefront: String
            var currency: String
            var units: Int
            var freeUnits: Int
            var gross: Int64
            var proceeds: Int64
            var refunds: Int64
            var net: Int64
            var exact: Bool
        }
        struct Report: Decodable {
            var from: String
            var to: String
            var skipped: Int
            var lines: [Line]
            var totals: [Line]
        }
        let report = try JSONDecoder().decode(Report.self, from: json)
        // Exact, never rounded: two decimals, or three when a tenth of a cent is there (0.796 prints 0.796).
        func amount(_ milli: Int64) -> String { ReportMoney.text(milli) }
        var out = "revenue \(report.from) to \(report.to) (estimated proceeds; \(report.skipped) not revenue: sandbox, family, no price)\n"
        let header = ["day", "product", "storefront", "currency", "units", "free", "gross", "proceeds", "refunds", "net", ""]
        var rows = [header]
        for line in report.lines + report.totals {
            rows.append([
                line.day.isEmpty ? "total" : line.day, line.productId, line.storefront, line.currency, String(line.units), String(line.freeUnits),
                amount(line.gross), amount(line.proceeds), amount(line.refunds), amount(line.net), line.exact ? "" : "estimate",
            ])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            out +=
                zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces) + "\n"
        }
        return out
    }
}

/// `storekeeper report subscriptions --from D --to D`: subscription analytics.
struct SubscriptionReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscriptions",
        abstract: "Subscriptions: new, renewals, trials and conversion, churn, recoveries, subscribers, MRR, cohorts.",
        discussion: """
            Reads GET /v1/admin/reports/subscriptions from a running server with the admin key in STOREKEEPER_ADMIN_KEY. \
            Amounts are in milliunits. Example: STOREKEEPER_ADMIN_KEY=... storekeeper report subscriptions --from 2026-11-01 --to 2026-12-01
            """
    )

    @Option(help: "The server's address.") var server = "http://127.0.0.1:8080"
    @Option(help: "First day, YYYY-MM-DD (UTC).") var from: String
    @Option(help: "The day after the last, YYYY-MM-DD (UTC).") var to: String
    @Flag(help: "Print the product lines as CSV.") var csv = false

    func run() async throws {
        guard let key = ProcessInfo.processInfo.environment["STOREKEEPER_ADMIN_KEY"], !key.isEmpty else {
            throw ValidationError("set STOREKEEPER_ADMIN_KEY to an admin key (auth.adminKeys)")
        }
        var components = URLComponents(string: server)
        components?.path = "/v1/admin/reports/subscriptions"
        components?.queryItems = [URLQueryItem(name: "from", value: from), URLQueryItem(name: "to", value: to)]
        guard let url = components?.url, url.scheme == "http" || url.scheme == "https" else {
            throw ValidationError("--server must be an http(s) address")
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.headers.add(name: "X-Admin-Key", value: key)
        request.headers.add(name: "Accept", value: csv ? "text/csv" : "application/json")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(300))
        let body = try await response.body.collect(upTo: 64 << 20)
        guard response.status == .ok else {
            FileHandle.standardError.write(Data("storekeeper report subscriptions: \(response.status.code) \(String(buffer: body))\n".utf8))
            throw ExitCode(1)
        }
        if csv {
            FileHandle.standardOutput.write(Data(body.readableBytesView))
            return
        }
        print(try Self.text(Data(body.readableBytesView)), terminator: "")
    }

    static func text(_ json: Data) throws -> String {
        struct Product: Decodable {
            var productId: String
            var newSubscriptions, renewals, trialStarts, trialConversions, activeAtEnd, trialsAtEnd: Int
            var voluntaryChurn, billingChurn, billingFailures, graceEntered, recoveries: Int
        }
        struct Recurring: Decodable {
            var productId, currency: String
            var subscribers: Int
            var monthly: Int64
        }
        struct Cohort: Decodable {
            var month, currency: String
            var subscribers, activeAtEnd, paidPeriods: Int
            var gross, refunded: Int64
        }
        struct Report: Decodable {
            var from, to: String
            var products: [Product]
            var recurring: [Recurring]
            var cohorts: [Cohort]
        }
        let report = try JSONDecoder().decode(Report.self, from: json)
        var out = "subscriptions \(report.from) to \(report.to)\n"
        for p in report.products {
            out += "\(p.productId): \(p.newSubscriptions) new, \(p.renewals) renewals, \(p.trialStarts) trials (\(p.trialConversions) paid), "
            out += "\(p.activeAtEnd) subscribed at the end (\(p.trialsAtEnd) in a trial); churn \(p.voluntaryChurn) voluntary, "
            out += "\(p.billingChurn) billing; \(p.billingFailures) billing failures (\(p.graceEntered) into grace), \(p.recoveries) recovered\n"
        }
        for r in report.recurring { out += "MRR \(r.productId) \(r.currency): \(r.monthly) (\(r.subscribers) subscribers)\n" }
        for c in report.cohorts {
            out += "cohort \(c.month) \(c.currency): \(c.subscribers) subscribers, \(c.activeAtEnd) still subscribed, "
            out += "\(c.paidPeriods) paid periods, gross \(c.gross), refunded \(c.refunded)\n"
        }
        return out
    }
}
