import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// `storekeeper events tail`: follows the outbox of a running server from the command line.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Read Storekeeper's outbox of events.",
        subcommands: [Tail.self]
    )

    struct Tail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tail",
            abstract: "Print the outbox's events as JSON lines, oldest first, and keep following it.",
            discussion: """
                Pages GET /v1/admin/events?after= on a running server with the admin key in STOREKEEPER_ADMIN_KEY and \
                prints one JSON object per event (position, userId, sequence, type, subject, occurredAt, details). \
                Positions are in commit order, so following by position never skips an event, even one committed late \
                by another server on PostgreSQL. Starts after --after (0: from the first event; default: the end, \
                only new events); with --no-follow it stops at the end. Resume from the last position printed.
                Example: STOREKEEPER_ADMIN_KEY=... storekeeper events tail --after 0 --user alice
                """
        )

        @Option(help: "The server's address.") var server = "http://127.0.0.1:8080"
        @Option(help: "Print events after this position (0: all; default: only new ones).") var after: Int64?
        @Option(help: "Only this user's events.") var user: String?
        @Option(help: "Seconds between polls at the end of the outbox (0.1-60).") var interval: Double = 1
        @Flag(inversion: .prefixedNo, help: "Keep following at the end.") var follow = true

        func validate() throws {
            if let after, after < 0 { throw ValidationError("--after is a position, 0 or more") }
            guard (0.1...60).contains(interval) else { throw ValidationError("--interval is 0.1 to 60 seconds") }
        }

        struct Page: Decodable {
            var events: [Event]
            var next: Int64?
        }

        struct Event: Decodable {
            var position: Int64
        }

        func run() async throws {
            guard let key = ProcessInfo.processInfo.environment["STOREKEEPER_ADMIN_KEY"], !key.isEmpty else {
                throw ValidationError("set STOREKEEPER_ADMIN_KEY to an admin key (auth.adminKeys)")
            }
            guard var base = URLComponents(string: server), base.scheme == "http" || base.scheme == "https" else {
                throw ValidationError("--server must be an http(s) address")
            }
            base.path = "/v1/admin/events"
            var cursor: Int64
            if let after { cursor = after } else { cursor = try await end(base, key: key) }
            while true {
                var components = base
                components.queryItems =
                    [URLQueryItem(name: "after", value: String(cursor)), URLQueryItem(name: "limit", value: "1000")]
                    + (user.map { [URLQueryItem(name: "userId", value: $0)] } ?? [])
                let body = try await get(components, key: key)
                let page = try JSONDecoder().decode(Page.self, from: body)
                // Each event printed as the server wrote it, one per line.
                guard let object = try JSONSerialization.jsonObject(with: body) as? [String: Any], let events = object["events"] as? [Any] else {
                    throw ValidationError("the server's answer is not an event page")
                }
                for event in events {
                    let line = try JSONSerialization.data(withJSONObject: event, options: [.sortedKeys, .withoutEscapingSlashes])
                    FileHandle.standardOutput.write(line + Data("\n".utf8))
                }
                if let last = page.events.last?.position { cursor = last }
                if page.next != nil { continue }
                guard follow else { return }
                try await Task.sleep(for: .milliseconds(Int(interval * 1000)))
            }
        }

        /// The newest event's position: where "only new events" starts.
        func end(_ base: URLComponents, key: String) async throws -> Int64 {
            var cursor: Int64 = 0
            while true {
                var components = base
                components.queryItems = [URLQueryItem(name: "after", value: String(cursor)), URLQueryItem(name: "limit", value: "1000")]
                let page = try JSONDecoder().decode(Page.self, from: try await get(components, key: key))
                guard let last = page.events.last?.position else { return cursor }
                cursor = last
                if page.next == nil { return cursor }
            }
        }

        func get(_ components: URLComponents, key: String) async throws -> Data {
            guard let url = components.url else { throw ValidationError("--server must be an http(s) address") }
            var request = HTTPClientRequest(url: url.absoluteString)
            request.headers.add(name: "X-Admin-Key", value: key)
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
            let body = try await response.body.collect(upTo: 64 << 20)
            guard response.status == .ok else {
                FileHandle.standardError.write(Data("storekeeper events tail: \(response.status.code) \(String(buffer: body))\n".utf8))
                throw ExitCode(1)
            }
            return Data(body.readableBytesView)
        }
    }
}
