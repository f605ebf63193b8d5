import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import StorekeeperServer
import StorekeeperTestSupport
import Testing

/// `storekeeper serve` killed with SIGKILL at random moments while Apple's notifications stream in, restarted each
/// time: nothing acknowledged is lost and nothing is applied twice, checked against the simulator's ground truth.
@Suite(.serialized) struct CrashRecoveryTests {
    static let secret = "crash-test-hs256-secret-0123456789abcdef"
    static let adminKey = "crash-admin-key-0123456789"
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Samples")

    static var databases: [String] {
        ProcessInfo.processInfo.environment["POSTGRES_PORT"] == nil ? ["sqlite"] : ["sqlite", "postgres"]
    }

    /// A `storekeeper serve` child process.
    final class Server: @unchecked Sendable {
        let process = Process()
        let port: Int

        init(port: Int, environment: [String: String]) throws {
            self.port = port
            process.executableURL = CommandLineTests.binary
            process.arguments = ["serve"]
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try ProcessLauncher.run(process)
        }

        var url: String { "http://127.0.0.1:\(port)" }

        /// Whether the server answered `/health`; false when it exited first (its port taken after all).
        func waitUntilReady() async throws -> Bool {
            for _ in 0..<600 {
                guard process.isRunning else { return false }
                if let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: url + "/health"), timeout: .seconds(2)),
                    response.status == .ok
                {
                    return true
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            Issue.record("server did not start")
            return false
        }

        func kill() {
            guard process.isRunning else { return }
            Foundation.kill(process.processIdentifier, SIGKILL)
            Self.reap(process)
        }

        /// Waits (at most 30 s) for a killed child to be reaped. Polled: `waitUntilExit()` spins a run loop on the
        /// calling thread, and these calls run on the test's small cooperative pool.
        static func reap(_ process: Process) {
            for _ in 0..<3000 where process.isRunning { usleep(10_000) }
        }
    }

    static func post(_ url: String, json: Data, headers: [(String, String)] = []) async -> (status: Int, body: [String: Any]) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: json))
        do {
            // Short: a request to a killed server is retried by the client's pool until this deadline.
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(3))
            let body = try await response.body.collect(upTo: 1 << 20)
            return (Int(response.status.code), (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any] ?? [:])
        } catch {
            return (0, [:])
        }
    }

    static func get(_ url: String, headers: [(String, String)]) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: url)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 22)
        return (try JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any] ?? [:]
    }

    @Test("SIGKILL while notifications stream in loses nothing acknowledged and applies nothing twice", arguments: databases)
    func killedAndRestarted(database: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sk-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let chain = try AppStoreSigningChain.generate(.init(name: "Crash Test"))
        let rootFile = directory.appendingPathComponent("root.pem")
        try chain.rootPEM().write(to: rootFile, atomically: true, encoding: .utf8)
        let catalog = try SimulatorCatalog.load(from: Self.samples.appendingPathComponent("simulator-catalog.json"))
        let store = try SimulatedAppStore(catalog: catalog, signingChain: chain, seed: 7, start: Date())
        await store.setDeliversNotifications(true)

        var environment = [
            "DB_KIND": database, "APPS": "main", "APPS_MAIN_APP_STORE_BUNDLE_ID": catalog.bundleId,
            "APPS_MAIN_DEPLOYMENT": "development", "APPS_MAIN_APP_STORE_EXTRA_ROOTS": rootFile.path,
            "CATALOG_FILE": Self.samples.appendingPathComponent("storekeeper-catalog.json").path,
            "AUTH_JWT_HS256SECRET": Self.secret, "AUTH_ADMIN_KEYS": "ops:\(Self.adminKey)", "LOG_LEVEL": "critical",
            "LIFECYCLE_CATCH_UP_SECONDS": "0", "LIFECYCLE_SWEEP_SECONDS": "0", "LIFECYCLE_POLL_MILLISECONDS": "50",
            // A few connections are plenty here, and the whole suite shares PostgreSQL's max_connections.
            "DB_POSTGRES_MAX_CONNECTIONS": "6",
        ]
        var databaseName: String?
        if database == "postgres" {
            let env = ProcessInfo.processInfo.environment
            let name = "sk_crash_\(UUID().uuidString.prefix(8).lowercased())"
            databaseName = name
            let base =
                "postgres://\(env["POSTGRES_USER"] ?? "storekeeper"):\(env["POSTGRES_PASSWORD"] ?? "storekeeper")@\(env["POSTGRES_HOST"] ?? "127.0.0.1"):\(env["POSTGRES_PORT"] ?? "5432")"
            try await Self.psql(base + "/" + (env["POSTGRES_DB"] ?? "postgres"), "CREATE DATABASE \(name)")
            environment["DB_POSTGRES_URL"] = base + "/" + name
        } else {
            environment["DB_SQLITE_PATH"] = directory.appendingPathComponent("crash.sqlite").path
        }
        let clock = ContinuousClock.now
        func trace(_ text: String) {
            if ProcessInfo.processInfo.environment["CRASH_TRACE"] != nil { print("[\(ContinuousClock.now - clock)] \(text)") }
        }
        func start() async throws -> Server {
            // A port the kernel just handed out, not a random one another test may be listening on; another try if
            // something took it before the server bound it.
            for _ in 0..<3 {
                let port = ProcessLifecycleTests.freePort()
                environment["HTTP_PORT"] = String(port)
                let server = try Server(port: port, environment: environment)
                if try await server.waitUntilReady() {
                    trace("server ready on \(port)")
                    return server
                }
            }
            Issue.record("the server exited before it was ready, three times")
            throw CancellationError()
        }

        // Customers: an order each (its token), then a year of subscriptions, coins and refunds on Apple's side.
        var server = try await start()
        var customers: [(user: String, token: UUID)] = []
        for index in 0..<48 {
            let user = "crash-\(index)"
            let product = index % 3 == 0 ? "com.example.storekeeper.coins.60" : "com.example.storekeeper.membership.monthly.standard"
            let reply = await Self.post(
                server.url + "/v1/orders",
                json: try JSONSerialization.data(withJSONObject: ["productId": product]),
                headers: [("Authorization", "Bearer " + UserTokenVerifier.hs256Token(subject: user, secret: Self.secret, lifetime: 86_400))]
            )
            #expect(reply.status == 201)
            let token = try #require(UUID(uuidString: reply.body["appAccountToken"] as? String ?? ""))
            customers.append((user, token))
            let account = try await store.createAccount().id
            let bought = try await store.purchase(productId: product, account: account, appAccountToken: token)
            if index % 6 == 3 { try await store.decideRefund(transactionId: bought.transaction.transactionId!, approve: true) }
        }
        for month in 0..<9 {
            try await store.advance(by: 31 * 86_400)
            if month == 2 {
                for transaction in await store.sentNotifications().suffix(3) {
                    if let id = transaction.payload.data?.signedTransactionInfo.flatMap({
                        try? SignedDataVerifier.decodeUnverified($0, as: JWSTransactionDecodedPayload.self).payload.transactionId
                    }) {
                        try? await store.decideRefund(transactionId: id, approve: true)
                    }
                }
            }
        }
        let notifications = await store.sentNotifications().map(\.signedPayload)
        trace("\(notifications.count) notifications made")
        #expect(notifications.count > 100)

        // Stream them in, killing the server at random moments; whatever was not acknowledged is sent again.
        var acknowledged = Set<Int>()
        for round in 0..<6 {
            let pending = (0..<notifications.count).filter { !acknowledged.contains($0) }
            let current = server
            let url = current.url
            let killed = Killed()
            let killer = Task {
                try await Task.sleep(for: .milliseconds(Int.random(in: 50...400)))
                if round < 5 {
                    current.kill()
                    killed.set()
                }
            }
            let results = await withTaskGroup(of: (Int, Int).self) { group in
                var results: [(Int, Int)] = []
                var next = pending.makeIterator()
                for _ in 0..<8 {
                    guard let index = next.next() else { break }
                    group.addTask {
                        (
                            index,
                            await Self.post(
                                url + "/apple/notifications/v2",
                                json: try! JSONSerialization.data(withJSONObject: ["signedPayload": notifications[index]])
                            ).status
                        )
                    }
                }
                while let result = await group.next() {
                    results.append(result)
                    // Once the server is gone the rest waits for the next round, as Apple's retries would.
                    if !killed.value, let index = next.next() {
                        group.addTask {
                            (
                                index,
                                await Self.post(
                                    url + "/apple/notifications/v2",
                                    json: try! JSONSerialization.data(withJSONObject: ["signedPayload": notifications[index]])
                                ).status
                            )
                        }
                    }
                }
                return results
            }
            try? await killer.value
            trace("round \(round): \(results.filter { $0.1 == 200 }.count) of \(results.count) acknowledged")
            for (index, status) in results where status == 200 { acknowledged.insert(index) }
            if round < 5 {
                server.kill()
                server = try await start()
            }
        }
        #expect(acknowledged.count == notifications.count)
        let final = server
        defer { final.kill() }

        // Duplicates after recovery change nothing; wait for everything to be applied.
        for index in stride(from: 0, to: notifications.count, by: 7) {
            _ = await Self.post(
                server.url + "/apple/notifications/v2",
                json: try JSONSerialization.data(withJSONObject: ["signedPayload": notifications[index]])
            )
        }
        let admin = [("X-Admin-Key", Self.adminKey)]
        _ = await Self.post(server.url + "/v1/admin/jobs/process-notifications/run", json: Data("{}".utf8), headers: admin)
        let summary = try await Self.get(server.url + "/v1/admin/notifications/summary", headers: admin)
        let counts = summary["counts"] as? [String: Int] ?? [:]
        #expect(counts["processed"] == Set(notifications).count, "\(counts)")
        #expect(counts["pending"] == nil && counts["dead"] == nil, "\(counts)")

        // The outbox, read the way a consumer would: paged by position.
        var events: [[String: Any]] = []
        var after = 0
        while true {
            let page = try await Self.get(server.url + "/v1/admin/events?after=\(after)&limit=1000", headers: admin)
            let items = page["events"] as? [[String: Any]] ?? []
            events += items
            guard let next = page["next"] as? Int else { break }
            after = next
        }
        var eventsByUser: [String: [[String: Any]]] = [:]
        for event in events { eventsByUser[event["userId"] as? String ?? "", default: []].append(event) }

        let now = await store.currentDate
        for (user, token) in customers {
            let truth = await store.groundTruth(appAccountToken: token, at: now)
            let me = try await Self.get(
                server.url + "/v1/admin/users/\(user)?at=\(Int64(now.timeIntervalSince1970 * 1000))",
                headers: admin
            )
            let active = Set(
                (me["entitlements"] as? [[String: Any]] ?? []).filter { $0["active"] as? Bool == true }
                    .compactMap { $0["entitlement"] as? String }
            )
            let expected = Set(truth.entitlements.keys.map { _ in "membership" })
            #expect(active == expected, "\(user): \(active) vs \(expected)")
            let coins = (me["wallet"] as? [String: Any])?["coins"] as? Int ?? 0
            #expect(coins == 60 * (truth.consumables["com.example.storekeeper.coins.60"] ?? 0), "\(user) coins")
            // Every transaction once.
            let delivered = (me["transactions"] as? [[String: Any]] ?? []).compactMap { $0["transactionId"] as? String }
            #expect(delivered.count == Set(delivered).count)
            #expect(Set(delivered) == Set(truth.transactions.compactMap(\.transactionId)), "\(user) transactions")
            // Killed between a change and its commit, both or neither: exactly one purchase.delivered per delivered
            // transaction, none for anything else, and the user's sequence without gaps.
            let own = eventsByUser[user] ?? []
            let announced = own.filter { $0["type"] as? String == "purchase.delivered" }.compactMap { $0["subject"] as? String }
            #expect(announced.sorted() == delivered.sorted(), "\(user): delivered events match deliveries")
            #expect(own.map { $0["sequence"] as? Int ?? 0 } == Array(stride(from: 1, through: own.count, by: 1)), "\(user) sequence")
            let refunded = Set(own.filter { $0["type"] as? String == "purchase.refunded" }.compactMap { $0["subject"] as? String })
            #expect(refunded.isSubset(of: Set(delivered)))
        }
        if let databaseName, let url = environment["DB_POSTGRES_URL"] {
            final.kill()
            try await Self.psql(
                url.replacingOccurrences(of: "/" + databaseName, with: "/postgres"),
                "DROP DATABASE IF EXISTS \(databaseName) WITH (FORCE)"
            )
        }
    }

    final class Killed: @unchecked Sendable {
        private let lock = NSLock()
        private var flag = false
        var value: Bool { lock.withLock { flag } }
        func set() { lock.withLock { flag = true } }
    }

    /// Runs one statement on PostgreSQL with psql (Debian's postgresql package brings it).
    /// Runs one statement with psql, again after a pause while it fails (the full suite's servers can briefly take
    /// every connection PostgreSQL allows), and records an issue when it never succeeds.
    static func psql(_ url: String, _ sql: String) async throws {
        for attempt in 1...10 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["psql", url, "-q", "-c", sql]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try ProcessLauncher.run(process)
            for _ in 0..<600 where process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
            #expect(!process.isRunning, "psql finished")
            if !process.isRunning, process.terminationStatus == 0 { return }
            if attempt < 10 { try await Task.sleep(for: .seconds(1)) }
        }
        Issue.record("psql failed ten times: \(sql)")
    }
}
