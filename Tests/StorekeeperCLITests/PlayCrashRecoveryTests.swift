import AsyncHTTPClient
import Foundation
import GooglePlaySimulator
import GooglePlayWire
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import StorekeeperServer
import StorekeeperTestSupport
import Testing

/// `storekeeper serve` killed with SIGKILL at random moments while Android apps submit Google Play purchases, restarted
/// each time, with the Play simulator staying up: every purchase is delivered once (0 lost, 0 doubled) and, once the
/// acknowledgement job has run, consumed at Google, checked against the simulator's records.
@Suite(.serialized) struct PlayCrashRecoveryTests {
    @Test("SIGKILL during Google Play purchases: nothing lost, nothing doubled, everything consumed", arguments: CrashRecoveryTests.databases)
    func killedDuringPlayPurchases(database: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sk-play-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let play = try SimulatedPlayStore(catalog: .sample, now: Date())
        let ports = AsyncStream<Int>.makeStream()
        let simulator = Application(
            router: PlaySimulatorServer.buildRouter(store: play),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { ports.continuation.yield($0.localAddress?.port ?? 0) }
        )
        let simulatorGroup = ServiceGroup(services: [simulator], gracefulShutdownSignals: [], logger: Logger(label: "test.play"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await simulatorGroup.run() }
            defer { tasks.cancelAll() }
            var iterator = ports.stream.makeAsyncIterator()
            let playURL = "http://127.0.0.1:\(await iterator.next() ?? 0)"
            let account = try await play.issueServiceAccount(email: "crash@storekeeper-test.iam.gserviceaccount.com", tokenURI: playURL + "/token")
            let keyFile = directory.appendingPathComponent("service-account.json")
            #expect(FileManager.default.createFile(atPath: keyFile.path, contents: Data(account.json()), attributes: [.posixPermissions: 0o600]))
            try await run(database: database, directory: directory, play: play, playURL: playURL, keyFile: keyFile)
            await simulatorGroup.triggerGracefulShutdown()
        }
    }

    private func run(database: String, directory: URL, play: SimulatedPlayStore, playURL: String, keyFile: URL) async throws {
        let package = PlayCatalog.sample.packageName
        var environment = [
            "DB_KIND": database, "APPS": "main", "APPS_MAIN_APP_STORE_BUNDLE_ID": "com.example.storekeeper",
            "APPS_MAIN_DEPLOYMENT": "development", "APPS_MAIN_GOOGLE_PLAY_PACKAGE_NAME": package,
            "APPS_MAIN_GOOGLE_PLAY_SERVICE_ACCOUNT_PATH": keyFile.path, "APPS_MAIN_GOOGLE_PLAY_API_URL": playURL,
            "CATALOG_FILE": CrashRecoveryTests.samples.appendingPathComponent("storekeeper-catalog.json").path,
            "AUTH_JWT_HS256SECRET": CrashRecoveryTests.secret, "AUTH_ADMIN_KEYS": "ops:\(CrashRecoveryTests.adminKey)",
            "LOG_LEVEL": "critical", "LIFECYCLE_CATCH_UP_SECONDS": "0", "LIFECYCLE_SWEEP_SECONDS": "0",
            "LIFECYCLE_ACKNOWLEDGE_SECONDS": "0", "LIFECYCLE_PLAY_CATCH_UP_SECONDS": "0", "DB_POSTGRES_MAX_CONNECTIONS": "6",
        ]
        var databaseName: String?
        if database == "postgres" {
            let env = ProcessInfo.processInfo.environment
            let name = "sk_play_crash_\(UUID().uuidString.prefix(8).lowercased())"
            databaseName = name
            let base =
                "postgres://\(env["POSTGRES_USER"] ?? "storekeeper"):\(env["POSTGRES_PASSWORD"] ?? "storekeeper")@\(env["POSTGRES_HOST"] ?? "127.0.0.1"):\(env["POSTGRES_PORT"] ?? "5432")"
            try await CrashRecoveryTests.psql(base + "/" + (env["POSTGRES_DB"] ?? "postgres"), "CREATE DATABASE \(name)")
            environment["DB_POSTGRES_URL"] = base + "/" + name
        } else {
            environment["DB_SQLITE_PATH"] = directory.appendingPathComponent("play-crash.sqlite").path
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

        // 24 customers, 120 purchases: coins (1 to 3 units) and an unlock now and then, each on the customer's phone.
        var made: [(user: String, token: String, productId: String, units: Int)] = []
        for index in 0..<24 {
            let phone = await play.createAccount().id
            for round in 0..<5 {
                let unlock = round == 4 && index % 4 == 0
                let units = unlock ? 1 : 1 + (index + round) % 3
                let bought = try await play.buy(productId: unlock ? "lifetime_pro" : "coins_100", account: phone, quantity: Int32(units))
                made.append(("play-crash-\(index)", bought.token, bought.productId, units))
            }
        }
        let purchases = made
        func submit(_ server: CrashRecoveryTests.Server, _ index: Int) async -> Int {
            let purchase = purchases[index]
            return await CrashRecoveryTests.post(
                server.url + "/v1/purchases",
                json: try! JSONSerialization.data(withJSONObject: [
                    "store": "googlePlay", "packageName": package, "productId": purchase.productId, "purchaseToken": purchase.token,
                ]),
                headers: [
                    (
                        "Authorization",
                        "Bearer " + UserTokenVerifier.hs256Token(subject: purchase.user, secret: CrashRecoveryTests.secret, lifetime: 86_400)
                    )
                ]
            ).status
        }

        // Submitted with kills at random moments; whatever was not answered 200 is submitted again, as the SDK does.
        var server = try await start()
        var delivered = Set<Int>()
        var interrupted = 0
        for round in 0..<6 {
            let pending = (0..<purchases.count).filter { !delivered.contains($0) }
            let current = server
            let killed = CrashRecoveryTests.Killed()
            let killer = Task {
                try await Task.sleep(for: .milliseconds(Int.random(in: 20...150)))
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
                    group.addTask { (index, await submit(current, index)) }
                }
                while let result = await group.next() {
                    results.append(result)
                    if !killed.value, let index = next.next() { group.addTask { (index, await submit(current, index)) } }
                }
                return results
            }
            try? await killer.value
            for (index, status) in results where status == 200 { delivered.insert(index) }
            interrupted += results.filter { $0.1 != 200 }.count
            if round < 5 {
                server.kill()
                server = try await start()
            }
        }
        let final = server
        defer { final.kill() }
        // The server stays up now: whatever a loaded machine left unanswered is submitted again until it is, as the
        // SDK keeps a purchase until a definite answer.
        for _ in 0..<20 where delivered.count < purchases.count {
            for index in 0..<purchases.count where !delivered.contains(index) {
                if await submit(final, index) == 200 { delivered.insert(index) }
            }
        }
        #expect(delivered.count == purchases.count, "every purchase answered 200 in the end")
        #expect(interrupted > 0, "the kills cut submissions off")
        // Submitted once more after recovery: still once.
        for index in stride(from: 0, to: purchases.count, by: 5) { #expect(await submit(final, index) == 200) }

        // The consumptions a kill cut off are made by the job.
        let admin = [("X-Admin-Key", CrashRecoveryTests.adminKey)]
        let job = await CrashRecoveryTests.post(final.url + "/v1/admin/jobs/acknowledge-purchases/run", json: Data("{}".utf8), headers: admin)
        #expect(job.status == 200, "\(job.body)")
        for purchase in purchases {
            let truth = await play.purchase(purchase.token)
            #expect(purchase.productId == "lifetime_pro" ? truth?.acknowledged == true : truth?.consumed == true, "\(purchase.token)")
        }
        for user in Set(purchases.map(\.user)).sorted() {
            let own = purchases.filter { $0.user == user }
            let me = try await CrashRecoveryTests.get(final.url + "/v1/admin/users/\(user)", headers: admin)
            let coins = (me["wallet"] as? [String: Any])?["coins"] as? Int ?? 0
            #expect(coins == 100 * own.filter { $0.productId == "coins_100" }.map(\.units).reduce(0, +), "\(user): 0 lost, 0 doubled")
            let transactions = (me["transactions"] as? [[String: Any]] ?? []).compactMap { $0["transactionId"] as? String }
            #expect(transactions.count == own.count && Set(transactions).count == own.count, "\(user): each purchase once")
        }
        if let databaseName, let url = environment["DB_POSTGRES_URL"] {
            final.kill()
            try await CrashRecoveryTests.psql(
                url.replacingOccurrences(of: "/" + databaseName, with: "/postgres"),
                "DROP DATABASE IF EXISTS \(databaseName) WITH (FORCE)"
            )
        }
    }
}
