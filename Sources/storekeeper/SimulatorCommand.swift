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

/// `storekeeper simulator`: run the local App Store simulator on loopback.
struct SimulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulator",
        abstract: "Run a local App Store (and with --play-port a Google Play) that speaks the store's wire formats, on a clock you control.",
        discussion: """
            Serves the device API (/device/...), the operator's controls (/control/...: clock, refunds, price \
            increases, extensions, families, faults, ground truth, sent notifications), Apple's App Store Server \
            API (/inApps/...), verifyReceipt (/verifyReceipt, /sandbox/verifyReceipt), and GET /control/root.pem, \
            the root certificate a verifier must pin. Everything it signs verifies through AppStoreWire with that \
            root. The state directory also holds the In-App Purchase key (SubscriptionKey_SIMULATOR1.p8, key id \
            SIMULATOR1) that clients sign Server API requests with, and the receipt-signing chain. GET /openapi.yaml \
            describes every route with its bodies. With --play-port, a Google Play simulator too, on its own port: \
            Google's token endpoint and certificates, the Play Developer API (/androidpublisher/v3/...), Cloud \
            Storage's reports bucket (/storage/v1/b/pubsite_prod_rev_.../o: the monthly earnings reports), a \
            device's purchases (/device/accounts, /device/purchases), ground truth (/control/purchases, \
            /control/subscriptions, /control/earnings, /control/notifications), faults (/control/faults) and its \
            clock (GET /control/clock), which follows \
            the App Store simulator's: /control/clock/advance moves both. Its service account key \
            (play-service-account.json in the state directory, for apps.<name>.googlePlay.serviceAccount.path) is kept \
            between runs, and with --play-push-url it pushes real-time developer notifications there as Pub/Sub \
            does, with OIDC tokens its /oauth2/v1/certs verifies.
            """
    )

    @Option(help: "Address to listen on (loopback by default).")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on.")
    var port = 8090

    @Option(help: "Catalog file (JSON; default: the built-in sample catalog).")
    var catalog: String?

    @Option(help: "Seed: the same seed, catalog and actions give the same ids, dates and order.")
    var seed: UInt64 = 1

    @Option(name: .customLong("state-dir"), help: "Directory keeping the signing chain between runs.")
    var stateDirectory = ".storekeeper-simulator"

    @Option(name: .customLong("root-out"), help: "Also write the root certificate (PEM) to this file.")
    var rootOut: String?

    @Option(name: .customLong("start"), help: "Initial clock, in epoch milliseconds (default: now, as a server on the wall clock expects).")
    var startMilliseconds: Int64?

    @Option(name: .customLong("renewal-limit"), help: "Stop renewing after this many renewals (Apple's sandbox: 12).")
    var renewalLimit: Int?

    @Option(help: "Environment to sign for: sandbox (default) or production.")
    var environment = "sandbox"

    @Option(
        name: .customLong("ocsp-url"),
        help: "OCSP responder address new signing chains name (default http://HOST:PORT/ocsp; nothing answers there)."
    )
    var ocspURL: String?

    @Flag(name: .customLong("v1-notifications"), help: "Send V1 JSON notifications instead of V2 signed payloads.")
    var v1Notifications = false

    @Flag(
        name: .customLong("real-time"),
        help: "Run the clock with the wall clock at Apple's sandbox renewal rate (1 month = 5 minutes, 12 renewals)."
    )
    var realTime = false

    @Option(name: .customLong("shared-secret"), help: "App-specific shared secret verifyReceipt requires for subscriptions.")
    var sharedSecret: String?

    @Option(
        name: .customLong("notification-url"),
        help: "Deliver notifications here (retried on Apple's schedule, measured on the simulator's clock)."
    )
    var notificationURL: String?

    @Option(name: .customLong("play-port"), help: "Also serve a Google Play simulator on this port.")
    var playPort: Int?

    @Option(
        name: .customLong("play-push-url"),
        help: "With --play-port: push real-time developer notifications here (the push token's audience is this URL)."
    )
    var playPushURL: String?

    /// The Play simulator's service account, in the state directory.
    static let playKeyFile = "play-service-account.json"
    static let playAccount = "storekeeper@storekeeper-simulator.iam.gserviceaccount.com"
    static let playPushAccount = "play-rtdn@storekeeper-simulator.iam.gserviceaccount.com"

    func validate() throws {
        if playPushURL != nil, playPort == nil { throw ValidationError("--play-push-url needs --play-port") }
        if let playPort, !(1...65_535).contains(playPort) || playPort == port {
            throw ValidationError("--play-port must be a free port other than --port")
        }
        if let playPushURL, URL(string: playPushURL).map({ $0.scheme == "http" || $0.scheme == "https" }) != true {
            throw ValidationError("--play-push-url must be an http(s) URL")
        }
    }

    func run() async throws {
        let catalog =
            try self.catalog.map { try SimulatorCatalog.load(from: URL(fileURLWithPath: $0)) }
            ?? JSONDecoder().decode(SimulatorCatalog.self, from: Data(SampleCatalogs.simulator.utf8))
        try catalog.validate()
        let appStoreEnvironment: AppStoreEnvironment
        switch environment.lowercased() {
        case "sandbox": appStoreEnvironment = .sandbox
        case "production": appStoreEnvironment = .production
        default: throw ValidationError("--environment must be sandbox or production")
        }
        let ocsp = ocspURL ?? "http://\(host):\(port)/ocsp"
        let chain = try SigningIdentityStore.loadOrCreate(
            directory: URL(fileURLWithPath: stateDirectory, isDirectory: true),
            ocspURL: ocsp
        )
        let rootPEM = try chain.rootPEM()
        if let rootOut { try rootPEM.write(toFile: rootOut, atomically: true, encoding: .utf8) }
        let store = try SimulatedAppStore(
            catalog: catalog,
            signingChain: chain,
            seed: seed,
            start: startMilliseconds.map { Date(timeIntervalSince1970: Double($0) / 1000) } ?? Date(),
            environment: appStoreEnvironment
        )
        // The 12-renewal cap is the sandbox's.
        await store.setRenewalLimit(renewalLimit ?? (realTime && appStoreEnvironment == .sandbox ? 12 : nil))
        var logger = Logger(label: "storekeeper.simulator")
        logger.logLevel = .info
        logger.info("simulator listening", metadata: ["host": "\(host)", "port": "\(port)", "bundleId": "\(catalog.bundleId)"])
        var services: [any Service] = []
        if realTime {
            await store.setTimeScale(.sandboxRate)
            services.append(RealTimeClockService(store: store))
        }
        let stateURL = URL(fileURLWithPath: stateDirectory, isDirectory: true)
        let apiKey = try SimulatorAPIKey.loadOrCreate(directory: stateURL)
        let receiptIdentity = try ReceiptSigningIdentity.loadOrGenerate(in: stateURL, options: .init(ocspURL: ocsp))
        let apple = SimulatorServer.AppleSide(
            apiKeys: [apiKey.keyId: apiKey.privateKey.publicKey],
            issuerId: apiKey.issuerId,
            receiptIdentity: receiptIdentity,
            sharedSecret: sharedSecret
        )
        if let notificationURL {
            let format: NotificationDeliveryService.Format =
                v1Notifications ? .v1(V1NotificationComposer(identity: receiptIdentity, sharedSecret: sharedSecret)) : .v2
            services.append(
                NotificationDeliveryService(store: store, url: notificationURL, httpClient: HTTPClient.shared, format: format)
            )
        }
        logger.info(
            "App Store Server API key (also App Store Connect's team key for the reports)",
            metadata: [
                "keyId": "\(apiKey.keyId)", "issuerId": "\(apiKey.issuerId)", "vendorNumber": "\(apple.vendorNumber)",
                "p8": "\(stateURL.appendingPathComponent(SimulatorAPIKey.fileName).path)",
            ]
        )
        if let playPort {
            services += try await playServices(
                port: playPort,
                start: await store.currentDate,
                clock: { await store.currentDate },
                state: stateURL,
                logger: logger
            )
        }
        let app = await SimulatorServer.buildApplication(
            store: store,
            rootPEM: rootPEM,
            apple: apple,
            host: host,
            port: port,
            services: services,
            logger: logger
        )
        do {
            try await app.runService()
        } catch {
            logger.critical("storekeeper simulator stopped", metadata: ["error": "\(error)"])
            throw ExitCode.failure
        }
    }

    /// The Google Play simulator as services beside the App Store's: its HTTP server, and its pushes when asked for.
    /// Its service account key is kept in the state directory (mode 0600) so a server configured with it keeps
    /// working across restarts of the simulator.
    /// Its clock follows the App Store simulator's (`clock`): one virtual clock for both, moved at `/control/clock/advance`.
    private func playServices(
        port playPort: Int,
        start: Date,
        clock: @escaping @Sendable () async -> Date,
        state: URL,
        logger: Logger
    ) async throws -> [any Service] {
        let play = try SimulatedPlayStore(catalog: .sample, now: start)
        let playURL = "http://\(host):\(playPort)"
        let keyURL = state.appendingPathComponent(Self.playKeyFile)
        if let json = try? Data(contentsOf: keyURL), let key = try? ServiceAccountKey.parse(Array(json)),
            key.clientEmail == Self.playAccount, key.tokenURI == playURL + "/token"
        {
            await play.registerServiceAccount(key)
        } else {
            let key = try await play.issueServiceAccount(email: Self.playAccount, tokenURI: playURL + "/token")
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: keyURL.path, contents: Data(key.json()), attributes: [.posixPermissions: 0o600]) else {
                throw ValidationError("cannot write \(keyURL.path)")
            }
        }
        let owner = "POST http://\(host):\(port)/control/clock/advance"
        var services: [any Service] = [
            PlaySimulatorServer.buildApplication(store: play, host: host, port: playPort, clockOwner: owner, logger: logger)
        ]
        if let playPushURL { await play.configurePush(.init(endpoint: playPushURL, serviceAccountEmail: Self.playPushAccount)) }
        // Follows the clock (and pushes, when configured) whether or not anything is pushed.
        services.append(PlayPushService(store: play, transport: AsyncHTTPPlayTransport(client: .shared), follow: clock, logger: logger))
        logger.info(
            "Google Play simulator listening",
            metadata: [
                "url": "\(playURL)", "packageName": "\(PlayCatalog.sample.packageName)", "serviceAccountKey": "\(keyURL.path)",
                "reportsBucket": "\(SimulatedPlayStore.reportsBucket)", "push": "\(playPushURL ?? "off")",
                "pushServiceAccount": "\(Self.playPushAccount)",
            ]
        )
        return services
    }
}
