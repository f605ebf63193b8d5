import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// `storekeeper reconcile --from D --to D`: each day against Apple's sales report, through a running server.
struct ReconcileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconcile",
        abstract: "Reconcile days against App Store Connect's reports (or a month against Google Play's) and list what disagrees.",
        discussion: """
            Asks a running server (POST /v1/admin/reconciliation/run, one day at a time, with a progress bar on a \
            terminal; with --month, POST /v1/admin/reconciliation/months/{month}/run against the financial report) with the admin key in STOREKEEPER_ADMIN_KEY, then prints each day's status and the findings: \
            apple_only (lost orders), storekeeper_only (delivered, never sold by Apple), refunds never taken back, \
            prices and proceeds that differ. A day is Apple's report day: midnight to midnight in the server's \
            reports.timeZone (America/Los_Angeles unless configured), not UTC. The server needs reports.vendorNumber \
            and reports.key.*. Re-running a day \
            replaces its findings. With --google-play and --month, a UTC month of Google Play sales against Google's \
            earnings report, order by order (POST /v1/admin/reconciliation/google-play/{month}/run; the server needs \
            apps.<name>.googlePlay.reports.bucket): google_only (lost orders), unknown_to_google, prices, proceeds and \
            refunds. Exits 2 when there are findings, 1 on an error.
            Example: STOREKEEPER_ADMIN_KEY=... storekeeper reconcile --from 2026-11-01 --to 2026-11-08
            Example: STOREKEEPER_ADMIN_KEY=... storekeeper reconcile --google-play --month 2026-10
            """
    )

    @Option(help: "The server's address.") var server = "http://127.0.0.1:8080"
    @Option(help: "First day, YYYY-MM-DD, as Apple's reports cut days (the server's reports.timeZone, Pacific by default).")
    var from: String?
    @Option(help: "The day after the last, YYYY-MM-DD (Apple's report days).") var to: String?
    @Option(help: "A month, YYYY-MM, against Apple's monthly financial report (instead of --from and --to).") var month: String?
    @Flag(help: "With --month: the month's Google Play sales against Google's earnings report (a UTC month).") var googlePlay = false
    @Flag(help: "Print the findings as CSV.") var csv = false

    func validate() throws {
        if month == nil, from == nil || to == nil { throw ValidationError("give --from and --to (days), or --month") }
        if month != nil, from != nil || to != nil { throw ValidationError("give --month or --from and --to, not both") }
        if googlePlay, month == nil { throw ValidationError("--google-play reconciles a month: give --month") }
    }

    struct Day: Decodable {
        var day: String
        var status: String
        var appleUnits: Int64
        var storekeeperUnits: Int64
        var appleRefunds: Int64
        var storekeeperRefunds: Int64
        var findings: Int
        var message: String?
    }

    struct Finding: Decodable {
        var day: String
        var kind: String
        var productId: String
        var storefront: String
        var currency: String
        var appleUnits: Int64
        var storekeeperUnits: Int64
        var appleAmount: Int64
        var storekeeperAmount: Int64
        var transactionIds: [String]
        var detail: String
    }

    struct Answer: Decodable {
        var days: [Day]
        var findings: [Finding]
    }

    static func days(from: String, to: String) throws -> [String] {
        func date(_ text: String) -> Date? {
            guard text.utf8.count == 10, let date = try? Date(text + "T00:00:00Z", strategy: .iso8601) else { return nil }
            return date
        }
        guard let start = date(from), let end = date(to), start < end, end.timeIntervalSince(start) <= 366 * 86_400 else {
            throw ValidationError("--from and --to are YYYY-MM-DD report days, --from first, at most 366 days apart")
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return stride(from: start.timeIntervalSince1970, to: end.timeIntervalSince1970, by: 86_400).map {
            formatter.string(from: Date(timeIntervalSince1970: $0))
        }
    }

    func run() async throws {
        guard let key = ProcessInfo.processInfo.environment["STOREKEEPER_ADMIN_KEY"], !key.isEmpty else {
            throw ValidationError("set STOREKEEPER_ADMIN_KEY to an admin key (auth.adminKeys)")
        }
        guard var base = URLComponents(string: server), base.scheme == "http" || base.scheme == "https" else {
            throw ValidationError("--server must be an http(s) address")
        }
        if let month {
            guard month.utf8.count == 7, month.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) }) else {
                throw ValidationError("--month is YYYY-MM")
            }
            base.path = googlePlay ? "/v1/admin/reconciliation/google-play/\(month)/run" : "/v1/admin/reconciliation/months/\(month)/run"
            guard let url = base.url else { throw ValidationError("--server must be an http(s) address") }
            var request = HTTPClientRequest(url: url.absoluteString)
            request.method = .POST
            request.headers.add(name: "X-Admin-Key", value: key)
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(600))
            let body = try await response.body.collect(upTo: 64 << 20)
            guard response.status == .ok else {
                FileHandle.standardError.write(Data("storekeeper reconcile: \(month): \(response.status.code) \(String(buffer: body))\n".utf8))
                throw ExitCode(1)
            }
            let answer = try JSONDecoder().decode(Answer.self, from: Data(body.readableBytesView))
            print(csv ? Self.csv(answer.findings) : Self.text(answer), terminator: "")
            if !answer.findings.isEmpty { throw ExitCode(2) }
            return
        }
        base.path = "/v1/admin/reconciliation/run"
        guard let url = base.url, let from, let to else { throw ValidationError("--server must be an http(s) address") }
        let days = try Self.days(from: from, to: to)
        let progress = ProgressBar(total: days.count, enabled: isatty(STDERR_FILENO) == 1)
        var answer = Answer(days: [], findings: [])
        for (index, day) in days.enumerated() {
            progress.show(done: index, label: day)
            var request = HTTPClientRequest(url: url.absoluteString)
            request.method = .POST
            request.headers.add(name: "X-Admin-Key", value: key)
            request.headers.add(name: "Content-Type", value: "application/json")
            let next = Self.days(after: day)
            request.body = .bytes(ByteBuffer(string: #"{"from":"\#(day)","to":"\#(next)"}"#))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(600))
            let body = try await response.body.collect(upTo: 64 << 20)
            guard response.status == .ok else {
                progress.finish()
                FileHandle.standardError.write(Data("storekeeper reconcile: \(day): \(response.status.code) \(String(buffer: body))\n".utf8))
                throw ExitCode(1)
            }
            let one = try JSONDecoder().decode(Answer.self, from: Data(body.readableBytesView))
            answer.days += one.days
            answer.findings += one.findings
        }
        progress.show(done: days.count, label: "done")
        progress.finish()
        print(csv ? Self.csv(answer.findings) : Self.text(answer), terminator: "")
        if !answer.findings.isEmpty { throw ExitCode(2) }
    }

    static func days(after day: String) -> String {
        guard let date = try? Date(day + "T00:00:00Z", strategy: .iso8601) else { return day }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date.addingTimeInterval(86_400))
    }

    static func text(_ answer: Answer) -> String {
        var out = ""
        for day in answer.days {
            out += "\(day.day)  \(day.status.padding(toLength: 13, withPad: " ", startingAt: 0))  "
            out += "Apple \(day.appleUnits) sold, \(day.appleRefunds) refunded; Storekeeper \(day.storekeeperUnits) delivered, "
            out += "\(day.storekeeperRefunds) taken back; \(day.findings) finding(s)"
            if let message = day.message { out += " (\(message))" }
            out += "\n"
        }
        if answer.findings.isEmpty { return out + "no findings\n" }
        out += "\nfindings:\n"
        for f in answer.findings {
            out += "\(f.day)  \(f.kind)  \(f.productId)  \(f.storefront) \(f.currency)  Apple \(f.appleUnits), Storekeeper \(f.storekeeperUnits)"
            out += "  \(f.detail)\n"
        }
        return out
    }

    static func csv(_ findings: [Finding]) -> String {
        func quoted(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
        var out = "day,kind,product_id,storefront,currency,apple_units,storekeeper_units,apple_amount,storekeeper_amount,transaction_ids,detail\n"
        for f in findings {
            out +=
                [
                    f.day, f.kind, quoted(f.productId), quoted(f.storefront), quoted(f.currency), String(f.appleUnits), String(f.storekeeperUnits),
                    String(f.appleAmount), String(f.storekeeperAmount), quoted(f.transactionIds.joined(separator: " ")), quoted(f.detail),
                ].joined(separator: ",") + "\n"
        }
        return out
    }
}

/// A one-line progress bar on standard error, redrawn in place; silent when standard error is not a terminal.
struct ProgressBar {
    let total: Int
    let enabled: Bool

    func show(done: Int, label: String) {
        guard enabled, total > 0 else { return }
        let width = 30
        let filled = min(width, done * width / total)
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        FileHandle.standardError.write(Data("\r[\(bar)] \(done)/\(total) \(label)   ".utf8))
    }

    func finish() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\n".utf8))
    }
}
