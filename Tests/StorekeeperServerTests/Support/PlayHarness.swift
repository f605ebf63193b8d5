import AsyncHTTPClient
import Foundation
import GooglePlaySimulator
import GooglePlayWire
import Hummingbird
import NIOHTTP1
import StorekeeperAPI
import StorekeeperServer
import Testing

/// A Storekeeper server whose app also sells on Google Play, wired to a running Play simulator (real sockets on
/// loopback): the service account the simulator issued, its Play Developer API, and its push subscription posting
/// to the server's `/google/rtdn` with tokens signed by the simulator's own keys.
struct PlayHarness: Sendable {
    static let pushAudience = "https://storekeeper.test/google/rtdn"
    static let pushAccount = "play-push@storekeeper-sim.iam.gserviceaccount.com"
    static let packageName = PlayCatalog.sample.packageName

    let server: ServerHarness
    let play: SimulatedPlayStore
    let playURL: String
    let sender: PlayPushSender

    static func run(
        _ database: TestDatabase,
        configure: @Sendable @escaping (inout ServerConfiguration) -> Void = { _ in },
        _ body: @Sendable (PlayHarness) async throws -> Void
    ) async throws {
        let play = try SimulatedPlayStore(now: Date())
        let key = "play-\(UUID().uuidString)"
        let app = Application(
            router: PlaySimulatorServer.buildRouter(store: play),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in PortRegistry.shared.publish(key, channel.localAddress?.port ?? 0) },
            logger: ServerHarness.quietLogger("play")
        )
        try await ServerHarness.withRunning(app, key: key) { port in
            let playURL = "http://127.0.0.1:\(port)"
            let account = try await play.issueServiceAccount(
                email: "storekeeper@storekeeper-sim.iam.gserviceaccount.com",
                tokenURI: playURL + "/token"
            )
            let json = String(decoding: account.json(), as: UTF8.self)
            try await ServerHarness.run(
                database,
                configure: { configuration in
                    configuration.apps[0].googlePlay = GooglePlayConfiguration(
                        packageName: packageName,
                        serviceAccountJSON: json,
                        apiURL: URL(string: playURL)!,
                        pushAudience: pushAudience,
                        pushServiceAccount: pushAccount,
                        certsURL: URL(string: playURL + "/oauth2/v1/certs")!,
                        reportsBucket: SimulatedPlayStore.reportsBucket,
                        reportsURL: URL(string: playURL)!
                    )
                    // Months are reconciled on demand, on the simulator's clock.
                    configuration.lifecycle.playReconcileInterval = nil
                    configure(&configuration)
                }
            ) { server in
                await play.configurePush(
                    .init(endpoint: server.serverURL + "/google/rtdn", audience: pushAudience, serviceAccountEmail: pushAccount)
                )
                let sender = PlayPushSender(store: play, transport: AsyncHTTPPlayTransport(client: .shared))
                try await body(PlayHarness(server: server, play: play, playURL: playURL, sender: sender))
            }
        }
    }

    /// Creates an order for `user` naming the package; returns its id and the account id to hand Google Play.
    func order(_ productId: String, user: String) async throws -> (orderId: String, obfuscatedAccountId: String) {
        let reply = try await server.call(
            .POST,
            "/v1/orders",
            json: ["productId": productId, "bundleId": Self.packageName],
            headers: ServerHarness.userHeaders(user)
        )
        #expect(reply.status == 201, "\(reply.text)")
        let obfuscated = try #require(reply["obfuscatedAccountId"] as? String)
        #expect(reply["bundleId"] as? String == Self.packageName)
        return (try #require(reply["orderId"] as? String), obfuscated)
    }

    /// `POST /v1/purchases` for a Play purchase.
    func submit(_ productId: String, token: String, user: String, orderId: String? = nil) async throws -> ServerHarness.Reply {
        var json: [String: Any] = ["store": "googlePlay", "packageName": Self.packageName, "productId": productId, "purchaseToken": token]
        if let orderId { json["orderId"] = orderId }
        return try await server.call(.POST, "/v1/purchases", json: json, headers: ServerHarness.userHeaders(user))
    }

    /// Pushes every due notification to the server, applies what it stored and acknowledges what that delivered (the
    /// scheduled job's work, on the simulator's clock); returns how many pushes the server took.
    @discardableResult
    func pushAndApply(acknowledging: Bool = true) async throws -> Int {
        let taken = try await sender.deliverDue()
        try await server.runJob("process-notifications", now: Date())
        if acknowledging { try await server.runJob("acknowledge-purchases", now: await play.now) }
        return taken
    }

    /// Advances the simulator a day at a time until `token`'s subscription is in `state` (at most `days`).
    func advance(token: String, until state: GooglePlayWire.SubscriptionState, days: Int = 45) async throws {
        for _ in 0..<days {
            if await play.subscription(token)?.state == state { return }
            await play.advance(by: 86_400)
        }
        #expect(await play.subscription(token)?.state == state, "\(state.rawValue) not reached in \(days) days")
    }

    /// The user's coins and active entitlements, as of the Play simulator's clock.
    func holdings(_ user: String) async throws -> (coins: Int64, entitlements: Set<String>) {
        let me = try await server.me(user, at: await play.now)
        return (me.wallet.additionalProperties["coins"] ?? 0, Set(me.entitlements.filter(\.active).map(\.entitlement)))
    }
}
