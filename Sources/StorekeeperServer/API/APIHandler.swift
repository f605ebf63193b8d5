import Foundation
import OpenAPIRuntime
import StorekeeperAPI
import StorekeeperCore
import StorekeeperLedger
import StorekeeperServerAPI
import StorekeeperStorage

/// The API callers use, as the document declares it: the generated `APIProtocol`, one method per operation of the
/// client (`/v1`) and admin (`/v1/admin`) tags. The generated server decodes each request into its typed input and
/// encodes the typed output; ``RouteGroupTransport`` puts each operation behind its group's authentication, and the
/// caller is read from ``RequestScope``.
struct APIHandler: APIProtocol {
    let auth: Authenticator
    let ledger: Ledger
    let guests: GuestStore
    let allowLegacyGuestClaims: Bool
    let metrics: ServerMetrics
    let purchases: PurchaseService
    let orders: OrderStore
    let accounts: AccountStore
    let subscriptions: SubscriptionStore
    let audit: AuditStore
    let pendingTransactions: PendingTransactionStore
    let catalog: CatalogService
    let apps: AppRegistry
    let inbox: NotificationInbox
    let refusals: NotificationRefusalStore
    let consumption: ConsumptionRequestStore
    let jobs: LifecycleJobs
    let orderLifetime: Duration
    /// For revenue estimates: when the developer was in the Small Business Program.
    var smallBusinessProgram = SmallBusinessProgram()
    /// The revenue report's reads.
    var revenue: RevenueStore?
    /// The subscription analytics (charts, cohorts, drill-down).
    var analytics: AnalyticsService?
    /// Reconciliations run (read even when `reports.*` is not configured now).
    var reconciliations: ReconciliationStore?
    /// Deliveries to the app's backend, its configured endpoints, and how to wake the sender after a change.
    var webhooks: WebhookQueue
    var webhookEndpoints: [WebhookConfiguration] = []
    var webhookWake: (@Sendable () -> Void)?
    /// The teams of multiseat subscriptions.
    var teamService: TeamService?
    /// Google Play purchases (nil: no app sells there).
    var playPurchases: PlayPurchaseService?
    /// Limits the guests `POST /v1/guests` issues per client address (`auth.guestsPerAddressPerHour`).
    var guestLimiter: GuestIssueLimiter?

    /// The moment `?at=<epoch ms>` names (support: "what did they have when they wrote to us"; tests: a simulated
    /// clock), or now.
    static func moment(_ millis: Int64?) throws -> Date {
        guard let millis else { return Date() }
        guard EpochMillis.range.contains(millis) else {
            throw StorekeeperError.invalidInput(
                "invalid_at",
                "at must be epoch milliseconds in \(EpochMillis.range.lowerBound)...\(EpochMillis.range.upperBound)"
            )
        }
        return Date(timeIntervalSince1970: Double(millis) / 1000)
    }

    /// An optional number from the query within `range`, or a 400 `invalid_<name>`.
    static func bounded<T: FixedWidthInteger>(_ value: T?, name: String, in range: ClosedRange<T>, default fallback: T) throws -> T {
        guard let value else { return fallback }
        guard range.contains(value) else {
            throw StorekeeperError.invalidInput("invalid_\(name)", "\(name) must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// The user state `/v1/me` and the admin user view answer with.
    func userState(_ user: UserID, at now: Date) async throws -> Components.Schemas.User {
        let snapshot = try await accounts.snapshot(of: user)
        let userOrders = try await orders.orders(of: user)
        let records = try await subscriptions.subscriptions(of: user)
        return try Components.Schemas.User(snapshot: snapshot, orders: userOrders, subscriptions: records, now: now)
    }
}

extension APIHandler {
    /// The API's JSON as the document states it: ISO 8601 dates, sorted keys, unescaped slashes, nothing pretty.
    static let coding = Configuration(dateTranscoder: .iso8601, jsonEncodingOptions: [.sortedKeys, .withoutEscapingSlashes])
}
