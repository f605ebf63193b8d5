import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import ArgumentParser
import AsyncHTTPClient
import Crypto
import Foundation
import GooglePlaySimulator
import GooglePlayWire
import Hummingbird
import Logging
import ServiceLifecycle
import StorekeeperBenchmarks
import StorekeeperCore
import StorekeeperServer
import UnixSignals

/// `storekeeper demo`: the server on SQLite and the built-in App Store and Google Play simulators, wired to each other.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run Storekeeper on SQLite together with the built-in App Store and Google Play simulators, wired to each other.",
        discussion: """
            The server trusts the simulator's root certificate, verifies receipts with the simulator's verifyReceipt, \
            signs offers with the simulator's In-App Purchase key, and sells the sample catalog. It prints a curl \
            walkthrough: create an order, buy it on a simulated device, submit the signed transaction, read /v1/me. \
            State (keys, the SQLite database) lives in --state-dir. With --simulator-url the server uses a simulator \
            already running (`storekeeper simulator --state-dir` on the same directory, so both hold the same keys, \
            with --notification-url pointing here), so the server can be stopped and restarted while the App Store \
            keeps its state. The Google Play simulator (--play-port) sells the same app's Android products: the server \
            calls its Play Developer API with a service account it issued, and it pushes real-time developer \
            notifications to /google/rtdn with tokens signed by its own keys.
            """
    )

    @Option(help: "Server port.") var port = 8080
    @Option(name: .customLong("simulator-port"), help: "Simulator port.") var simulatorPort = 8090
    @Option(name: .customLong("play-port"), help: "Google Play simulator port (default: a free one, printed).") var playPort: Int?
    @Option(name: .customLong("state-dir"), help: "Directory for keys and the database.") var stateDirectory = ".storekeeper-demo"
    @Option(
        name: .customLong("simulator-url"),
        help: "Use this running simulator (started with the same --state-dir) instead of starting one."
    )
    var externalSimulatorURL: String?
    @Option(help: "Storekeeper catalog (default: the built-in sample catalog).") var catalog: String?
    @Option(name: .customLong("simulator-catalog"), help: "Simulator catalog (default: the built-in sample catalog).")
    var simulatorCatalog: String?
    @Flag(
        name: .customLong("production"),
        help: ArgumentHelp(
            "Rehearse production: the simulator signs purchases as Production (its own test chain, never Apple's).",
            discussion: "Its App Store Connect reports then have sales, so `storekeeper reconcile` has something to compare; "
                + "without it the simulator signs Sandbox, as Apple's sandbox does, and reports (production-only) are empty."
        )
    )
    var production = false
    @Option(
        name: .customLong("analytics-subscribers"),
        help: ArgumentHelp(
            "Seed a fresh state directory with a simulated year of this many subscribers, ending now (implies --production).",
            discussion: "Before serving, the simulator plays a year on the sample catalog's memberships — trials, renewals, "
                + "cancellations, billing failures and recoveries, refunds, upgrades, in the USA and China — through the "
                + "server, so the console's Analytics page has a year to show, with a sample CNY→USD rate kept so its "
                + "USD figures include China. About a minute per thousand subscribers in a release build."
        )
    )
    var analyticsSubscribers: Int?

    func validate() throws {
        if let analyticsSubscribers, !(1...100_000).contains(analyticsSubscribers) {
            throw ValidationError("--analytics-subscribers is 1 to 100000")
        }
        if analyticsSubscribers != nil, externalSimulatorURL != nil {
            throw ValidationError("--analytics-subscribers plays the year on the demo's own simulator, not one at --simulator-url")
        }
    }

    func run() async throws {
        let production = self.production || analyticsSubscribers != nil
        let logger = ConfigurationLoader.logger("storekeeper.demo", reader: try? await ConfigurationLoader.reader(file: nil))
        let state = URL(fileURLWithPath: stateDirectory, isDirectory: true).standardizedFileURL
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: state.path)
        let simulatorCatalog =
            try self.simulatorCatalog.map { try SimulatorCatalog.load(from: URL(fileURLWithPath: $0)) }
            ?? JSONDecoder().decode(SimulatorCatalog.self, from: Data(SampleCatalogs.simulator.utf8))
        try simulatorCatalog.validate()
        // The server seeds its catalog from a file: the built-in one is written into the state directory.
        let catalogFile =
            try catalog
            ?? {
                let url = state.appendingPathComponent("storekeeper-catalog.json")
                try Data(SampleCatalogs.storekeeper.utf8).write(to: url, options: .atomic)
                return url.path
            }()
        let chain = try SigningIdentityStore.loadOrCreate(directory: state)
        let apiKey = try SimulatorAPIKey.loadOrCreate(directory: state)
        let receipts = try ReceiptSigningIdentity.loadOrGenerate(in: state)
        let secrets = try DemoSecrets.loadOrCreate(in: state)
        // The key an app pins to check the server's signed answers (public: nothing to hide).
        if let pem = secrets.answerSigningKey {
            try Data(try P256.Signing.PrivateKey(pemRepresentation: pem).publicKey.pemRepresentation.utf8)
                .write(to: state.appendingPathComponent("answer-signing-public.pem"), options: .atomic)
        }
        let databasePath = state.appendingPathComponent("storekeeper.sqlite").path
        if analyticsSubscribers != nil, FileManager.default.fileExists(atPath: databasePath) {
            throw ValidationError("--analytics-subscribers seeds a fresh state directory; \(databasePath) already exists (use another --state-dir)")
        }
        let year = analyticsSubscribers.map { AnalyticsYear(subscribers: $0, days: 365, seed: UInt64.random(in: 1...UInt64.max / 2)) }
        let store = try SimulatedAppStore(
            catalog: simulatorCatalog,
            signingChain: chain,
            seed: UInt64.random(in: 1...UInt64.max),
            // A seeded year ends now: the simulator starts a year back and plays up to today.
            start: Date().addingTimeInterval(-Double(year?.days ?? 0) * 86_400),
            environment: production ? .production : .sandbox
        )

        let simulatorURL = externalSimulatorURL ?? "http://127.0.0.1:\(simulatorPort)"
        let simulator = await SimulatorServer.buildApplication(
            store: store,
            rootPEM: try chain.rootPEM(),
            apple: .init(apiKeys: [apiKey.keyId: apiKey.privateKey.publicKey], issuerId: apiKey.issuerId, receiptIdentity: receipts),
            port: simulatorPort,
            logger: logger
        )
        // Google Play: its own simulator, a service account it issued, and its push subscription to this server.
        // A free port unless one is named: a fixed default would collide between demos (and restarts of one demo
        // beside an external simulator).
        let playPort = try self.playPort ?? Self.freePort()
        let playURL = "http://127.0.0.1:\(playPort)"
        let play = try SimulatedPlayStore(catalog: .sample, now: Date())
        let playAccount = try await play.issueServiceAccount(
            email: "storekeeper@storekeeper-demo.iam.gserviceaccount.com",
            tokenURI: playURL + "/token"
        )
        let rtdn = "http://127.0.0.1:\(port)/google/rtdn"
        let pushAccount = "play-rtdn@storekeeper-demo.iam.gserviceaccount.com"
        await play.configurePush(.init(endpoint: rtdn, serviceAccountEmail: pushAccount))
        let playSimulator = PlaySimulatorServer.buildApplication(store: play, port: playPort, logger: logger)
        var configuration = ServerConfiguration(
            port: port,
            database: .sqlite(path: databasePath),
            catalogFile: catalogFile,
            apps: [
                AppConfiguration(
                    bundleId: simulatorCatalog.bundleId,
                    appAppleId: simulatorCatalog.appAppleId,
                    deployment: .development,
                    extraRootsPEM: [try chain.rootPEM(), try receipts.rootPEM()],
                    apiKeyId: apiKey.keyId,
                    apiIssuerId: apiKey.issuerId,
                    apiKeyPEM: apiKey.privateKey.pemRepresentation,
                    verifyReceiptProductionURL: URL(string: simulatorURL + "/verifyReceipt")!,
                    verifyReceiptSandboxURL: URL(string: simulatorURL + "/sandbox/verifyReceipt")!,
                    // Catch-up, the renewal sweep and refund answers go to the simulator too, never to Apple.
                    serverAPIURL: URL(string: simulatorURL)!
                )
            ],
            auth: AuthConfiguration(
                jwtHS256Secret: secrets.hs256Secret,
                apiKeys: ["demo-backend": secrets.apiKey],
                adminKeys: ["demo-admin": secrets.adminKey],
                answerSigningKeyPEM: secrets.answerSigningKey
            )
        )
        configuration.apps[0].googlePlay = GooglePlayConfiguration(
            packageName: PlayCatalog.sample.packageName,
            serviceAccountJSON: String(decoding: playAccount.json(), as: UTF8.self),
            apiURL: URL(string: playURL)!,
            pushAudience: rtdn,
            pushServiceAccount: pushAccount,
            certsURL: URL(string: playURL + "/oauth2/v1/certs")!,
            // The simulator's bucket: a month's earnings report appears once its clock has left the month.
            reportsBucket: SimulatedPlayStore.reportsBucket,
            reportsURL: URL(string: playURL)!
        )
        // Every simulated device and test run shares 127.0.0.1 here: a production limit would refuse them.
        configuration.auth.guestsPerAddressPerHour = 10_000
        // The simulator's App Store Connect takes the same key as the team key: `storekeeper reconcile` works here.
        configuration.reports = ReportsConfiguration(
            vendorNumber: SimulatorServer.AppleSide.defaultVendorNumber,
            keyId: apiKey.keyId,
            issuerId: apiKey.issuerId,
            privateKeyPEM: apiKey.privateKey.pemRepresentation,
            url: simulatorURL
        )
        if let consoleSecret = secrets.consoleSecret {
            configuration.console = ConsoleConfiguration(operators: [.init(name: "demo", role: .admin, secret: consoleSecret)])
        }
        if let year {
            await store.setDeliversNotifications(true)
            FileHandle.standardError.write(Data("Seeding a year of \(year.subscribers) subscribers…\n".utf8))
            // A sample rate (about the late-2026 one), so the charts' USD figures include the Chinese storefront.
            let fed = try await year.seed(
                store: store,
                configuration: configuration,
                adminKey: secrets.adminKey,
                exchangeRates: ["CNY": 140_000],
                logger: logger
            ) { day, sent in
                if day % 30 == 29 { FileHandle.standardError.write(Data("  day \(day + 1) of \(year.days): \(sent) notifications\n".utf8)) }
            }
            FileHandle.standardError.write(
                Data(
                    String(format: "Seeded in %.0f s (%d notifications); the Analytics page: /admin/analytics\n", fed.seconds, fed.notifications).utf8
                )
            )
        }
        let server = try await StorekeeperServer.buildApplication(configuration: configuration, logger: logger)
        // Written straight to the file handle: stdout is block-buffered when piped, and the demo runs until killed.
        FileHandle.standardOutput.write(
            Data(
                (Self.walkthrough(
                    port: port,
                    simulatorURL: simulatorURL,
                    playURL: playURL,
                    packageName: PlayCatalog.sample.packageName,
                    secrets: secrets,
                    state: state,
                    apiKey: apiKey,
                    production: production
                ) + "\n").utf8
            )
        )
        // The simulator sends its App Store Server Notifications to the server, as Apple would.
        let delivery = NotificationDeliveryService(
            store: store,
            url: "http://127.0.0.1:\(port)/apple/notifications/v2",
            httpClient: HTTPClient.shared,
            logger: logger
        )
        // Its clock runs with the wall clock (and jumps ahead with /control/advance), as the server's jobs do.
        let pushes = PlayPushService(store: play, transport: AsyncHTTPPlayTransport(client: .shared), realTime: true, logger: logger)
        // An external simulator delivers its own notifications.
        let services: [ServiceGroupConfiguration.ServiceConfiguration] =
            (externalSimulatorURL == nil ? [.init(service: simulator), .init(service: server), .init(service: delivery)] : [.init(service: server)])
            + [.init(service: playSimulator), .init(service: pushes)]
        let group = ServiceGroup(
            configuration: .init(
                services: services,
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        do {
            try await group.run()
        } catch {
            logger.critical("storekeeper demo stopped", metadata: ["error": "\(error)"])
            throw ExitCode.failure
        }
    }

    /// A port nobody listens on now: the kernel's choice for a socket bound to port 0, released at once.
    static func freePort() throws -> Int {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw ValidationError("no socket for the Google Play simulator's port") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw ValidationError("no free port for the Google Play simulator; name one with --play-port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func walkthrough(
        port: Int,
        simulatorURL: String,
        playURL: String,
        packageName: String,
        secrets: DemoSecrets,
        state: URL,
        apiKey: SimulatorAPIKey,
        production: Bool = false
    ) -> String {
        let server = "http://127.0.0.1:\(port)"
        let token = UserTokenVerifier.hs256Token(subject: "demo-user", secret: secrets.hs256Secret, lifetime: 7 * 86_400)
        let rehearsal =
            production
            ? """

            PRODUCTION REHEARSAL (--production): the simulator signs purchases as Production with its own test chain —
            never Apple's — so its App Store Connect reports have sales. Buy something, move the simulator past the
            day's end (Pacific Time) and reconcile the day against its reports:
              storekeeper simulator-advance --url \(simulatorURL) P1D
              STOREKEEPER_ADMIN_KEY=\(secrets.adminKey) storekeeper reconcile --server \(server) \\
                --from $(TZ=America/Los_Angeles date +%F) --to $(TZ=America/Los_Angeles date -d tomorrow +%F)
            """
            : """

            Reconciling needs sales in Apple's reports, which are production-only: this simulator signs Sandbox, so
            `storekeeper reconcile` finds nothing to compare. Start the demo with --production to rehearse it.
            """
        return """
            Storekeeper demo: server \(server), App Store simulator \(simulatorURL), Google Play simulator \(playURL)
            Admin key (X-Admin-Key): \(secrets.adminKey)
            Operator console: \(server)/admin (sign in as demo, secret \(secrets.consoleSecret ?? ""))
            A user token for "demo-user" (7 days): \(token)
            State: \(state.path) (the SQLite database, demo-secrets.json with the keys above and the key that signs
              answers to apps, whose public half apps pin: answer-signing-public.pem,
              the simulator's signing chain and its In-App Purchase key \(SimulatorAPIKey.fileName), key id \(apiKey.keyId),
              issuer \(apiKey.issuerId)); delete the directory to start afresh.

            Buy 60 coins as a guest (no account: the server issues the guest a credential), in five calls:
              GUEST=$(curl -s -X POST \(server)/v1/guests | sed 's/.*"token":"\\([^"]*\\)".*/\\1/')
              ORDER=$(curl -s -X POST \(server)/v1/orders -H "X-Storekeeper-Guest: $GUEST" -H 'Content-Type: application/json' \\
                -d '{"productId":"com.example.storekeeper.coins.60"}')
              ACCOUNT=$(curl -s -X POST \(simulatorURL)/device/accounts -H 'Content-Type: application/json' -d '{}' | sed 's/.*"id":"\\([^"]*\\)".*/\\1/')
              TOKEN=$(echo "$ORDER" | sed 's/.*"appAccountToken":"\\([^"]*\\)".*/\\1/')
              JWS=$(curl -s -X POST \(simulatorURL)/device/purchases -H 'Content-Type: application/json' \\
                -d "{\\"account\\":\\"$ACCOUNT\\",\\"productId\\":\\"com.example.storekeeper.coins.60\\",\\"appAccountToken\\":\\"$TOKEN\\"}" \\
                | sed 's/.*"signedTransaction":"\\([^"]*\\)".*/\\1/')
              curl -s -X POST \(server)/v1/purchases -H "X-Storekeeper-Guest: $GUEST" -H 'Content-Type: application/json' \\
                -d "{\\"signedTransaction\\":\\"$JWS\\"}"
              curl -s \(server)/v1/me -H "X-Storekeeper-Guest: $GUEST"

            Buy 100 coins on Google Play as demo-user: the order's obfuscatedAccountId goes to BillingFlowParams, the
            app posts the purchase token, the server asks the Play Developer API, delivers once and consumes it:
              USER="Authorization: Bearer \(token)"
              OBF=$(curl -s -X POST \(server)/v1/orders -H "$USER" -H 'Content-Type: application/json' \\
                -d '{"productId":"coins_100","bundleId":"\(packageName)"}' | sed 's/.*"obfuscatedAccountId":"\\([^"]*\\)".*/\\1/')
              PHONE=$(curl -s -X POST \(playURL)/device/accounts -H 'Content-Type: application/json' -d '{}' | sed 's/.*"id":"\\([^"]*\\)".*/\\1/')
              PTOKEN=$(curl -s -X POST \(playURL)/device/purchases -H 'Content-Type: application/json' \\
                -d "{\\"account\\":\\"$PHONE\\",\\"productId\\":\\"coins_100\\",\\"obfuscatedAccountId\\":\\"$OBF\\"}" \\
                | sed 's/.*"purchaseToken":"\\([^"]*\\)".*/\\1/')
              curl -s -X POST \(server)/v1/purchases -H "$USER" -H 'Content-Type: application/json' \\
                -d "{\\"store\\":\\"googlePlay\\",\\"packageName\\":\\"\(packageName)\\",\\"productId\\":\\"coins_100\\",\\"purchaseToken\\":\\"$PTOKEN\\"}"
              curl -s \(server)/v1/me -H "$USER"
            A subscription (vip_monthly, with "trial": true for its free week) is bought the same way; Google Play's
            notifications reach the server by themselves. The simulator's clock runs in real time; move it ahead with
              curl -s -X POST \(playURL)/control/advance -H 'Content-Type: application/json' -d '{"seconds": 2678400}'

            API: \(server)/openapi.yaml   health: \(server)/health   metrics: \(server)/metrics\(rehearsal)
            """
    }
}

/// The demo's own keys, kept in its state directory so tokens printed once keep working.
struct DemoSecrets: Codable {
    var hs256Secret: String
    var apiKey: String
    var adminKey: String
    /// The P-256 key that signs answers to apps (PEM); added to older state directories on the next start.
    var answerSigningKey: String?
    /// The secret of the console's `demo` operator (an admin); added to older state directories on the next start.
    var consoleSecret: String?

    static func loadOrCreate(in directory: URL) throws -> DemoSecrets {
        let url = directory.appendingPathComponent("demo-secrets.json")
        func random() -> String { SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() } }
        var secrets: DemoSecrets
        if let data = try? Data(contentsOf: url), let stored = try? JSONDecoder().decode(DemoSecrets.self, from: data) {
            guard stored.answerSigningKey == nil || stored.consoleSecret == nil else { return stored }
            secrets = stored
        } else {
            secrets = DemoSecrets(hs256Secret: random(), apiKey: "sk_" + random(), adminKey: "adm_" + random())
        }
        if secrets.answerSigningKey == nil { secrets.answerSigningKey = P256.Signing.PrivateKey().pemRepresentation }
        if secrets.consoleSecret == nil { secrets.consoleSecret = "con_" + random() }
        // Created owner-only before the secrets are written into it.
        let temporary = directory.appendingPathComponent("demo-secrets.json.tmp-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteNoPermission)
        }
        let handle = try FileHandle(forWritingTo: temporary)
        try handle.write(contentsOf: try JSONEncoder().encode(secrets))
        try handle.synchronize()
        try handle.close()
        guard rename(temporary.path, url.path) == 0 else { throw CocoaError(.fileWriteUnknown) }
        return secrets
    }
}
