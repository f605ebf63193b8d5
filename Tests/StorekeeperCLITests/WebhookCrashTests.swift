import AsyncHTTPClient
import Foundation
import StorekeeperServer
import StorekeeperTestSupport
import Testing

/// Issue 18: `storekeeper serve` killed with SIGKILL twenty times while it delivers events to the app's backend (a
/// Python `http.server` recording every POST): no event is lost, a repeat is only ever the same event id, and each
/// user's events first arrive in sequence order.
@Suite(.serialized) struct WebhookCrashTests {
    static let adminKey = "crash-admin-key-0123456789"
    static let secret = "crash-webhook-secret-0123456789abcdef"

    /// A backend in Python that appends each POST's signature header and body to a JSON-lines file.
    static let receiver = """
        import base64, http.server, json, sys
        out = open(sys.argv[1], "a", buffering=1)
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                out.write(json.dumps({"signature": self.headers.get("Storekeeper-Signature", ""),
                                      "body": base64.b64encode(body).decode()}) + "\\n")
                self.send_response(204)
                self.end_headers()
            def log_message(self, *args):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """

    @Test(
        "20 SIGKILLs while events are delivered: nothing lost, repeats only of the same event, per-user order kept",
        arguments: CrashRecoveryTests.databases
    )
    func killedWhileDelivering(database: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sk-webhook-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("received.jsonl")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", "-c", Self.receiver, log.path]
        let output = Pipe()
        python.standardOutput = output
        // Not the test's own stderr: a receiver left behind must not hold the test runner's pipes open.
        python.standardError = FileHandle.nullDevice
        try ProcessLauncher.run(python)
        defer {
            // SIGKILL: the child may inherit a mask that blocks SIGTERM from the test process.
            kill(python.processIdentifier, SIGKILL)
            CrashRecoveryTests.Server.reap(python)
        }
        let portLine = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        let receiverPort = try #require(Int(portLine.trimmingCharacters(in: .whitespacesAndNewlines)))

        var environment = [
            "DB_KIND": database, "APPS": "main", "APPS_MAIN_APP_STORE_BUNDLE_ID": "com.example.storekeeper",
            "APPS_MAIN_DEPLOYMENT": "development",
            "CATALOG_FILE": CrashRecoveryTests.samples.appendingPathComponent("storekeeper-catalog.json").path,
            "AUTH_ADMIN_KEYS": "ops:\(Self.adminKey)", "LOG_LEVEL": "critical", "LIFECYCLE_CATCH_UP_SECONDS": "0",
            "LIFECYCLE_SWEEP_SECONDS": "0", "WEBHOOKS": "backend", "WEBHOOKS_BACKEND_URL": "http://127.0.0.1:\(receiverPort)/hook",
            "WEBHOOKS_BACKEND_SECRETS": Self.secret, "WEBHOOKS_BACKEND_CONCURRENCY": "4",
        ]
        var databaseName: String?
        if database == "postgres" {
            let env = ProcessInfo.processInfo.environment
            let name = "sk_whcrash_\(UUID().uuidString.prefix(8).lowercased())"
            databaseName = name
            let base =
                "postgres://\(env["POSTGRES_USER"] ?? "storekeeper"):\(env["POSTGRES_PASSWORD"] ?? "storekeeper")@\(env["POSTGRES_HOST"] ?? "127.0.0.1"):\(env["POSTGRES_PORT"] ?? "5432")"
            try await CrashRecoveryTests.psql(base + "/" + (env["POSTGRES_DB"] ?? "postgres"), "CREATE DATABASE \(name)")
            environment["DB_POSTGRES_URL"] = base + "/" + name
        } else {
            environment["DB_SQLITE_PATH"] = directory.appendingPathComponent("crash.sqlite").path
        }
        func start() async throws -> CrashRecoveryTests.Server {
            for _ in 0..<3 {
                let port = ProcessLifecycleTests.freePort()
                environment["HTTP_PORT"] = String(port)
                let server = try CrashRecoveryTests.Server(port: port, environment: environment)
                if try await server.waitUntilReady() { return server }
            }
            Issue.record("the server exited before it was ready, three times")
            throw CancellationError()
        }
        let admin = [("X-Admin-Key", Self.adminKey)]
        let users = (0..<12).map { "whk-\($0)" }

        // Twenty rounds: wallet changes written (events), the server killed a moment later, mid-delivery.
        var server = try await start()
        var written = 0
        for round in 0..<20 {
            let current = server
            await withTaskGroup(of: Void.self) { group in
                for (index, user) in users.enumerated() {
                    group.addTask {
                        for step in 0..<2 {
                            _ = await CrashRecoveryTests.post(
                                current.url + "/v1/admin/users/\(user)/wallet/adjust",
                                json: try! JSONSerialization.data(withJSONObject: [
                                    "amount": 1 + index, "reason": "round \(round)", "idempotencyKey": "r\(round)-\(step)",
                                ]),
                                headers: admin
                            )
                        }
                    }
                }
            }
            written += users.count * 2
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...150)))
            server.kill()
            server = try await start()
        }
        let final = server
        defer { final.kill() }

        // What the outbox holds (acknowledged writes and any whose answer was lost to a kill), then wait for it all.
        var outbox: [Int64: (user: String, sequence: Int)] = [:]
        var after: Int64 = 0
        while true {
            let page = try await CrashRecoveryTests.get(final.url + "/v1/admin/events?after=\(after)&limit=1000", headers: admin)
            let events = page["events"] as? [[String: Any]] ?? []
            for event in events {
                let position = (event["position"] as? NSNumber)?.int64Value ?? 0
                outbox[position] = (event["userId"] as? String ?? "", event["sequence"] as? Int ?? 0)
                after = max(after, position)
            }
            if page["next"] == nil { break }
        }
        #expect(outbox.count >= written / 2, "most writes were acknowledged before their kill: \(outbox.count) of \(written)")
        var received: [[String: Any]] = []
        for _ in 0..<600 {
            received = try Self.read(log)
            let ids = Set(received.compactMap { ($0["id"] as? NSNumber)?.int64Value })
            if Set(outbox.keys).isSubset(of: ids) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let ids = received.compactMap { ($0["id"] as? NSNumber)?.int64Value }
        #expect(Set(outbox.keys).isSubset(of: Set(ids)), "every event arrived: \(Set(outbox.keys).subtracting(ids).sorted().prefix(20))")
        #expect(Set(ids).isSubset(of: Set(outbox.keys)), "nothing arrived that the outbox does not hold")
        // A repeat is the same event (same user, sequence and type); first arrivals per user go 1, 2, 3, ...
        var first: [Int64: [String: Any]] = [:]
        var last: [String: Int] = [:]
        for item in received {
            guard let id = (item["id"] as? NSNumber)?.int64Value, let user = item["user"] as? String, let sequence = item["sequence"] as? Int else {
                Issue.record("a body without id, user or sequence")
                continue
            }
            if let seen = first[id] {
                #expect(seen["user"] as? String == user && seen["sequence"] as? Int == sequence && seen["type"] as? String == item["type"] as? String)
                continue
            }
            first[id] = item
            #expect(sequence == (last[user] ?? 0) + 1, "\(user): \(sequence) arrived after \(last[user] ?? 0)")
            last[user] = sequence
            #expect(outbox[id]?.user == user && outbox[id]?.sequence == sequence)
        }
        if let databaseName, let url = environment["DB_POSTGRES_URL"] {
            final.kill()
            try await CrashRecoveryTests.psql(
                url.replacingOccurrences(of: "/" + databaseName, with: "/postgres"),
                "DROP DATABASE IF EXISTS \(databaseName) WITH (FORCE)"
            )
        }
    }

    /// The bodies the receiver wrote, each checked against its signature.
    static func read(_ log: URL) throws -> [[String: Any]] {
        let text = try String(contentsOf: log, encoding: .utf8)
        return text.split(separator: "\n").compactMap { line -> [String: Any]? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let signature = object["signature"] as? String, let encoded = object["body"] as? String,
                let body = Data(base64Encoded: encoded)
            else { return nil }
            #expect(WebhookSignature.verify(signature, body: body, secret: Self.secret, now: Date(), tolerance: 600))
            return try? JSONSerialization.jsonObject(with: body) as? [String: Any]
        }
    }
}
