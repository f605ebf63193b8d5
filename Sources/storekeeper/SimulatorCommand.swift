import AppStoreSimulator
import AppStoreTestSigning
import AppStoreWire
import ArgumentParser
import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// `storekeeper simulator`: run the local App Store simulator on loopback.
struct SimulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulator",
        abstract: "Run a local App Store that speaks Apple's wire formats, on a clock you control.",
        discussion: """
            Serves the device API (/device/...), the operator's controls (/control/...: clock, refunds, price \
            increases, extensions, families, faults, ground truth, sent notifications), Apple's App Store Server \
            API (/inApps/...), verifyReceipt (/verifyReceipt, /sandbox/verifyReceipt), and GET /control/root.pem, \
            the root certificate a verifier must pin. Everything it signs verifies through AppStoreWire with that \
            root. The state directory also holds the In-App Purchase key (SubscriptionKey_SIMULATOR1.p8, key id \
            SIMULATOR1) that clients sign Server API requests with, and the receipt-signing chain. GET /openapi.yaml \
            describes every route with its bodies.
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
}
