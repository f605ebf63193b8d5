import AppStoreSimulator
import AppStoreWire
import AsyncHTTPClient
import Foundation
import NIOHTTP1
import StorekeeperAPI
import StorekeeperServer
import Testing

/// Lifecycle helpers: Apple's deliveries on the simulator's clock, the processor and jobs run on demand, and
/// comparisons with the simulator's ground truth.
extension ServerHarness {
    /// The sample catalog's entitlement for each product.
    static let entitlementOf: [String: String] = [
        "com.example.storekeeper.chapter.2": "chapter.2",
        "com.example.storekeeper.pass.month": "pass",
        "com.example.storekeeper.membership.monthly": "membership",
        "com.example.storekeeper.membership.monthly.standard": "membership",
        "com.example.storekeeper.membership.yearly": "membership",
        "com.example.storekeeper.vipA": "vip",
        "com.example.storekeeper.vipB": "vip",
    ]

    var simulatedNow: Date { get async { await store.currentDate } }

    static func millis(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }

    /// Apple sends what is due to the server (V2 by default) and the server applies its inbox.
    @discardableResult
    func deliverAndApply(
        format: NotificationDeliveryService.Format = .v2,
        path: String = "/apple/notifications/v2"
    ) async throws -> Int {
        let delivery = NotificationDeliveryService(store: store, url: serverURL + path, httpClient: .shared, format: format)
        var sent = 0
        while true {
            let round = await delivery.deliverDue()
            sent += round
            if round == 0 { break }
        }
        try await runJob("process-notifications")
        return sent
    }

    /// Runs a lifecycle job through the admin API as of the simulator's clock; returns how many items it handled.
    @discardableResult
    func runJob(_ name: String, now: Date? = nil) async throws -> Int {
        let moment: Date
        if let now { moment = now } else { moment = await simulatedNow }
        let reply = try await call(
            .POST,
            "/v1/admin/jobs/\(name)/run",
            json: ["now": Self.millis(moment)],
            headers: Self.adminHeaders
        )
        #expect(reply.status == 200, "\(name): \(reply.text)")
        return reply["items"] as? Int ?? -1
    }

    /// `/v1/me` evaluated at `date` (the simulator's now by default).
    func me(_ user: String, at date: Date) async throws -> Components.Schemas.User {
        try await api(Self.userHeaders(user)).getMe(query: .init(at: Self.millis(date))).ok.body.json
    }

    /// The entitlements active on the server for `user` at `date`.
    func activeEntitlements(_ user: String, at date: Date) async throws -> Set<String> {
        Set(try await me(user, at: date).entitlements.filter(\.active).map(\.entitlement))
    }

    /// The entitlements the simulator's records say the token's owner has at `date`.
    func truthEntitlements(token: UUID, at date: Date) async -> Set<String> {
        let truth = await store.groundTruth(appAccountToken: token, at: date)
        return Set(truth.entitlements.keys.compactMap { Self.entitlementOf[$0] })
    }

    /// Expects the server's entitlements for `user` to equal the truth for `token`, now on the simulator's clock.
    func expectMatchesTruth(
        user: String,
        token: UUID,
        _ comment: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let now = await simulatedNow
        let server = try await activeEntitlements(user, at: now)
        let truth = await truthEntitlements(token: token, at: now)
        #expect(server == truth, "\(comment): server \(server.sorted()) vs truth \(truth.sorted())", sourceLocation: sourceLocation)
    }

    /// The server's view of one subscription.
    func subscription(_ original: String) async throws -> [String: Any] {
        try await call(.GET, "/v1/admin/subscriptions/\(original)", headers: Self.adminHeaders).body
    }

    /// Creates an order and a simulator account for `user`, returning the order's token.
    func newCustomer(_ user: String, product: String) async throws -> (account: String, token: UUID) {
        let account = try await store.createAccount().id
        let order = try await call(.POST, "/v1/orders", json: ["productId": product], headers: Self.userHeaders(user))
        #expect(order.status == 201, "\(order.text)")
        let token = try #require(UUID(uuidString: order["appAccountToken"] as? String ?? ""))
        return (account, token)
    }

    /// The simulator's name for a subscription state, as Storekeeper names it.
    static func storekeeperState(_ state: SimulatedSubscriptionState) -> String {
        switch state {
        case .active: "active"
        case .billingRetry: "billing_retry"
        case .gracePeriod: "grace_period"
        case .expired: "expired"
        case .revoked: "revoked"
        }
    }
}
