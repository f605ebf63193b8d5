import Hummingbird
import Logging

/// Builds the Play simulator's HTTP application: Google's token endpoint and the Play Developer API, and a device's
/// purchases and the clock (`/device/*`, `/control/advance`).
public enum PlaySimulatorServer {
    /// With `clockOwner` (the other simulator's clock route), `/control/advance` refuses and names it: the clock follows
    /// that one (``PlayPushService``'s `follow`).
    public static func buildRouter(store: SimulatedPlayStore, tokenURL: String? = nil, clockOwner: String? = nil) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("health") { _, _ in "ok" }
        PlayAPIController<BasicRequestContext>(store: store, tokenURL: tokenURL).add(to: router)
        PlayDeviceController<BasicRequestContext>(store: store, clockOwner: clockOwner).add(to: router)
        return router
    }

    /// The application serving ``buildRouter`` on `host`:`port` (port 0: any free one).
    public static func buildApplication(
        store: SimulatedPlayStore,
        host: String = "127.0.0.1",
        port: Int = 8091,
        clockOwner: String? = nil,
        logger: Logger = Logger(label: "storekeeper.play-simulator")
    ) -> some ApplicationProtocol {
        Application(
            router: buildRouter(store: store, tokenURL: port == 0 ? nil : "http://\(host):\(port)/token", clockOwner: clockOwner),
            configuration: .init(address: .hostname(host, port: port), serverName: "storekeeper-play-simulator"),
            logger: logger
        )
    }
}
