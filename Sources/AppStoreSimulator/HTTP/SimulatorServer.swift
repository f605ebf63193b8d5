import AppStoreWire
import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// Builds the simulator's HTTP application: the device API under `/device`, the operator's controls under
/// `/control`, and (as they land) Apple's own endpoints.
public enum SimulatorServer {
    /// What Apple's endpoints need: the API keys it accepts, the receipt-signing chain, the shared secret.
    public struct AppleSide: Sendable {
        /// App Store Server API keys (key id → public key) and their issuer.
        public var apiKeys: [String: P256.Signing.PublicKey]
        public var issuerId: String
        /// Signs legacy app receipts (`/device/accounts/:id/receipt`, verifyReceipt's `latest_receipt`).
        public var receiptIdentity: ReceiptSigningIdentity
        /// The app-specific shared secret verifyReceipt demands for subscription receipts, if any.
        public var sharedSecret: String?
        /// Switchable faults on these endpoints.
        public var faults: AppleEndpointFaults
        /// The App Store Connect vendor number report downloads must name.
        public var vendorNumber: String

        /// The vendor number of a simulator started without one.
        public static let defaultVendorNumber = "80000001"

        public init(
            apiKeys: [String: P256.Signing.PublicKey],
            issuerId: String,
            receiptIdentity: ReceiptSigningIdentity,
            sharedSecret: String? = nil,
            faults: AppleEndpointFaults = AppleEndpointFaults(),
            vendorNumber: String = Self.defaultVendorNumber
        ) {
            self.apiKeys = apiKeys
            self.issuerId = issuerId
            self.receiptIdentity = receiptIdentity
            self.sharedSecret = sharedSecret
            self.faults = faults
            self.vendorNumber = vendorNumber
        }
    }

    /// The router with every endpoint, for tests (`app.test(.router)`) and for ``buildApplication``.
    public static func buildRouter(
        store: SimulatedAppStore,
        rootPEM: String,
        apple: AppleSide? = nil
    )
        async -> Router<BasicRequestContext>
    {
        await build(store: store, rootPEM: rootPEM, apple: apple).router
    }

    /// Every route ``buildRouter`` registers with these arguments (Apple's endpoints only with `apple`), in
    /// registration order: what `GET /openapi.yaml` must describe.
    public static func routes(store: SimulatedAppStore, rootPEM: String, apple: AppleSide? = nil) async -> [SimulatorRoute] {
        await build(store: store, rootPEM: rootPEM, apple: apple).routes
    }

    /// The simulator's OpenAPI 3.1 document (bundled `simulator-openapi.yaml`), served at `GET /openapi.yaml`.
    public static func openAPIDocument() throws -> String {
        guard let url = Bundle.module.url(forResource: "simulator-openapi", withExtension: "yaml") else {
            throw SimulatorError.notAllowed("the bundled simulator-openapi.yaml is missing")
        }
        return try String(contentsOf: url, encoding: .utf8)
    }

    static func build(
        store: SimulatedAppStore,
        rootPEM: String,
        apple: AppleSide?
    ) async
        -> (router: Router<BasicRequestContext>, routes: [SimulatorRoute])
    {
        let router = RouteRecorder(Router())
        router.get("health") { _, _ in "ok" }
        router.get("openapi.yaml") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "application/yaml"],
                body: .init(byteBuffer: ByteBuffer(string: try openAPIDocument()))
            )
        }
        let offers = apple.map { OfferSignatureChecker(publicKeys: $0.apiKeys, issuerId: $0.issuerId) }
        DeviceController<BasicRequestContext>(store: store, offers: offers).add(to: router)
        ControlController<BasicRequestContext>(store: store, rootPEM: rootPEM, faults: apple?.faults).add(to: router)
        if let apple {
            let tokens = ServerAPITokenVerifier(
                publicKeys: apple.apiKeys,
                issuerId: apple.issuerId,
                bundleId: await store.catalog.bundleId
            )
            let serverAPI = ServerAPIController<BasicRequestContext>(store: store, tokens: tokens, faults: apple.faults)
            serverAPI.add(to: router)
            RetentionMessagingController<BasicRequestContext>(
                api: serverAPI,
                sender: RetentionRequestSender(store: store, httpClient: .shared, offers: offers)
            ).add(to: router)
            // App Store Connect: the same keys sign team tokens here (Apple's are separate team keys).
            ReportsController<BasicRequestContext>(
                store: store,
                tokens: ServerAPITokenVerifier(publicKeys: apple.apiKeys, issuerId: apple.issuerId, bundleId: nil),
                vendorNumber: apple.vendorNumber,
                faults: apple.faults
            ).add(to: router)
            AnalyticsReportsController<BasicRequestContext>(
                store: store,
                tokens: ServerAPITokenVerifier(publicKeys: apple.apiKeys, issuerId: apple.issuerId, bundleId: nil),
                faults: apple.faults
            ).add(to: router)
            ReceiptController<BasicRequestContext>(
                store: store,
                identity: apple.receiptIdentity,
                sharedSecret: apple.sharedSecret,
                faults: apple.faults
            ).add(to: router)
        }
        return (router.router, router.routes)
    }

    /// The application serving ``buildRouter`` on `host`:`port` (loopback by default), running `services`
    /// (a ``NotificationDeliveryService``, say) for as long as it runs.
    public static func buildApplication(
        store: SimulatedAppStore,
        rootPEM: String,
        apple: AppleSide? = nil,
        host: String = "127.0.0.1",
        port: Int = 8090,
        services: [any Service] = [],
        logger: Logger = Logger(label: "storekeeper.simulator")
    ) async -> some ApplicationProtocol {
        Application(
            router: await buildRouter(store: store, rootPEM: rootPEM, apple: apple),
            configuration: .init(address: .hostname(host, port: port), serverName: "storekeeper-simulator"),
            services: services,
            logger: logger
        )
    }
}
