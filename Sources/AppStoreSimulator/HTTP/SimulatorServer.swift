import AppStoreWire
import Hummingbird
import Logging
import ServiceLifecycle

/// Builds the simulator's HTTP application: the device API under `/device`, the operator's controls under
/// `/control`, and (as they land) Apple's own endpoints.
public enum SimulatorServer {
    /// The router with every endpoint, for tests (`app.test(.router)`) and for ``buildApplication``.
    public static func buildRouter(store: SimulatedAppStore, rootPEM: String) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("health") { _, _ in "ok" }
        DeviceController<BasicRequestContext>(store: store).add(to: router)
        ControlController<BasicRequestContext>(store: store, rootPEM: rootPEM).add(to: router)
        return router
    }

    /// The application serving ``buildRouter`` on `host`:`port` (loopback by default), running `services`
    /// (a ``NotificationDeliveryService``, say) for as long as it runs.
    public static func buildApplication(
        store: SimulatedAppStore, rootPEM: String, host: String = "127.0.0.1", port: Int = 8090,
        services: [any Service] = [], logger: Logger = Logger(label: "storekeeper.simulator")
    ) -> some ApplicationProtocol {
        Application(
            router: buildRouter(store: store, rootPEM: rootPEM),
            configuration: .init(address: .hostname(host, port: port), serverName: "storekeeper-simulator"),
            services: services, logger: logger)
    }
}
