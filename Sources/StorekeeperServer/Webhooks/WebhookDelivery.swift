import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import StorekeeperAPI
import StorekeeperCore
import StorekeeperLedger
import StorekeeperServerAPI
import StorekeeperStorage
import Synchronization

/// Sends the outbox to the app's backend, and Apple's notifications to whoever else wants them, at least once.
///
/// One loop per endpoint, each round one ledger command (``Ledger/webhookRound(_:endpoint:source:queueLimit:claimLimit:lease:now:)``):
/// record the last round's answers, queue what the outbox (or the notification inbox) gained since the endpoint's
/// cursor, claim the deliveries that are due and at the head of their user's line; then POST them in parallel
/// (at most `concurrency` at once, each a different user), and record each answer: 2xx is acknowledged; anything
/// else, a timeout or a refused connection is retried with exponential backoff and jitter until the endpoint's
/// maximum age, then kept as a dead letter. The loop wakes when the ledger commits, so an event is usually on its
/// way within milliseconds. Several processes may run it on one PostgreSQL: claims skip each other's rows and a
/// user's next event is never claimed while an earlier one is pending, so per-user order holds.
public struct WebhookDelivery: Service {
    let endpoints: [WebhookConfiguration]
    let queue: WebhookQueue
    let ledger: Ledger
    let inbox: NotificationInbox
    let states: @Sendable ([UserID], Date) async throws -> [UserID: WebhookState]
    let metrics: ServerMetrics
    let ready: ReadinessGate
    let logger: Logger
    let wakeUps: [String: WakeUpSignal]
    /// Deliveries queued since the queue's statistics were refreshed, and when that was.
    private let statistics = StatisticsTrigger()
    /// How long a quiet loop waits for a commit before looking again (retries come due on their own).
    let idle: Duration

    init(
        endpoints: [WebhookConfiguration],
        provider: any DatabaseProvider,
        ledger: Ledger,
        metrics: ServerMetrics,
        ready: ReadinessGate,
        logger: Logger,
        idle: Duration = .milliseconds(500)
    ) {
        let (accounts, orders, subscriptions) = (
            AccountStore(provider: provider), OrderStore(provider: provider), SubscriptionStore(provider: provider)
        )
        self.endpoints = endpoints
        self.queue = WebhookQueue(provider: provider)
        self.ledger = ledger
        self.inbox = NotificationInbox(provider: provider)
        self.states = { users, now in
            // Entitlements, wallet and subscriptions (not the purchase history), for a round's users in three queries.
            let snapshots = try await accounts.stateSnapshots(of: users)
            let records = try await subscriptions.subscriptions(ofUsers: users)
            var states: [UserID: WebhookState] = [:]
            for user in users {
                guard let snapshot = snapshots[user] else { continue }
                let view = try Components.Schemas.User(snapshot: snapshot, orders: [], subscriptions: records[user] ?? [], now: now)
                states[user] = WebhookState(
                    asOf: view.asOf,
                    guest: view.guest,
                    entitlements: view.entitlements,
                    wallet: view.wallet,
                    subscriptions: view.subscriptions
                )
            }
            return states
        }
        self.metrics = metrics
        self.ready = ready
        self.logger = logger
        self.idle = idle
        wakeUps = Dictionary(uniqueKeysWithValues: endpoints.map { ($0.name, WakeUpSignal()) })
        for endpoint in endpoints { metrics.webhookEndpoint(endpoint.name) }
    }

    /// Something was committed: every endpoint looks at the outbox again.
    func wake() {
        for signal in wakeUps.values { signal.signal() }
    }

    public func run() async throws {
        guard !endpoints.isEmpty else { return }
        var configuration = HTTPClient.Configuration()
        // A signed body is never re-sent somewhere a redirect points.
        configuration.redirectConfiguration = .disallow
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = endpoints.map(\.concurrency).max() ?? 32
        configuration.timeout.connect = .seconds(5)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            // Shutdown cancels the loops, mid-POST too: a delivery cut short was claimed, not acknowledged, so it is
            // sent again when its claim runs out (at least once).
            try await untilGracefulShutdown {
                try await ready.wait()
                try await registerUntilDone()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for endpoint in endpoints {
                        group.addTask { await loop(endpoint, client: client) }
                    }
                    try await group.waitForAll()
                }
            }
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    /// The endpoints' rows, retried while the database is away (a start must not fail on a blip).
    private func registerUntilDone() async throws {
        while true {
            do {
                try await ledger.registerWebhookEndpoints(endpoints.map(\.name), now: Date())
                return
            } catch {
                logger.warning("webhook endpoints not registered yet", metadata: ["error": "\(error)"])
                try await Task.sleep(for: .seconds(2))
            }
        }
    }

    private func loop(_ endpoint: WebhookConfiguration, client: HTTPClient) async {
        let wakeUp = wakeUps[endpoint.name] ?? WakeUpSignal()
        var lastStats = Date.distantPast
        var lastPurge = Date.distantPast
        while !Task.isCancelled {
            var busy = false
            do {
                let now = Date()
                if now.timeIntervalSince(lastStats) >= 5 {
                    lastStats = now
                    try await reportBacklog(endpoint, now: now)
                }
                if now.timeIntervalSince(lastPurge) >= 600 {
                    lastPurge = now
                    _ = try await ledger.purgeDeliveredWebhooks(before: now.addingTimeInterval(-7 * 86_400))
                }
                busy = try await runOnce(endpoint, client: client, now: now) > 0
            } catch is CancellationError {
                return
            } catch {
                logger.warning("webhook delivery pass failed", metadata: ["endpoint": "\(endpoint.name)", "error": "\(error)"])
                try? await Task.sleep(for: .seconds(1))
            }
            if !busy { await wakeUp.wait(timeout: idle) }
        }
    }

    private func reportBacklog(_ endpoint: WebhookConfiguration, now: Date) async throws {
        let stats = try await queue.stats(endpoint.name)
        metrics.webhookBacklog(
            endpoint: endpoint.name,
            pending: stats.pending,
            dead: stats.dead,
            oldestAge: stats.oldestPending.map { now.timeIntervalSince($0) } ?? 0
        )
    }

    /// Queues what is new and sends rounds of due deliveries while there are some; returns how many items moved
    /// (queued or sent).
    @discardableResult
    func runOnce(_ endpoint: WebhookConfiguration, client: HTTPClient, now: Date = Date()) async throws -> Int {
        let paused = try await queue.pausedEndpoints().contains(endpoint.name)
        let lease = Duration.seconds(endpoint.timeout.components.seconds * 3 + 30)
        let source = Self.source(of: endpoint)
        // Each round is one ledger command and one commit: the previous round's outcomes, what the outbox gained
        // meanwhile, and the next claim — so a user's next event is claimed as soon as the previous one was
        // acknowledged, one wait for the ledger a round.
        var outcomes: [(id: Int64, outcome: WebhookQueueTable.Outcome)] = []
        var clock = now
        var moved = 0
        for _ in 0..<8 {
            let round = try await ledger.webhookRound(
                outcomes,
                endpoint: endpoint.name,
                source: source,
                queueLimit: 2_000,
                claimLimit: paused ? 0 : endpoint.concurrency * 4,
                lease: lease,
                now: clock
            )
            outcomes = []
            moved += round.queued
            try await refreshStatisticsAfterGrowth(queued: round.queued)
            guard !round.claimed.isEmpty else { break }
            do {
                outcomes = try await send(round.claimed, endpoint: endpoint, client: client, now: clock)
            } catch {
                // Claimed but not sent (the round's events or users could not be read): back in line now, not after
                // the claim's lease — a database blip must not hold a user's events for a minute.
                try? await ledger.releaseWebhookClaims(round.claimed.map(\.id))
                throw error
            }
            moved += round.claimed.count
            // A pass on a simulated clock stays on it; a real one moves with time.
            clock = max(clock, Date())
        }
        if !outcomes.isEmpty { try await ledger.recordWebhookOutcomes(outcomes, now: clock) }
        return moved
    }

    /// After a large enqueue (a backlog built while the endpoint was paused or its backend down), the queue's
    /// statistics are refreshed before the claims that drain it — at most every ``statisticsInterval``.
    private func refreshStatisticsAfterGrowth(queued: Int) async throws {
        let due = statistics.state.withLock { state in
            state.queued += queued
            guard state.queued >= Self.statisticsThreshold,
                state.refreshed.map({ ContinuousClock.now - $0 >= Self.statisticsInterval }) ?? true
            else { return false }
            state = (0, ContinuousClock.now)
            return true
        }
        if due { try await queue.refreshStatistics() }
    }

    /// Deliveries queued since the statistics were last refreshed that call for a refresh.
    static let statisticsThreshold = 1_000
    static let statisticsInterval: Duration = .seconds(10)

    /// What the endpoint is sent: the outbox's events it takes, or Apple's notifications for its apps.
    static func source(of endpoint: WebhookConfiguration) -> WebhookQueueTable.Source {
        switch endpoint.kind {
        case .events:
            return .outbox { endpoint.accepts(type: $0, bundleId: $1) }
        case .apple:
            let bundles = Set(endpoint.bundleIds)
            return .notifications(overlap: 30) { bundle in bundles.isEmpty || bundle.map(bundles.contains) == true }
        }
    }

    /// POSTs `items` at most `concurrency` at a time; their outcomes.
    private func send(
        _ items: [WebhookQueueTable.Item],
        endpoint: WebhookConfiguration,
        client: HTTPClient,
        now: Date
    ) async throws -> [(id: Int64, outcome: WebhookQueueTable.Outcome)] {
        let requests = try await prepare(items, endpoint: endpoint)
        var outcomes: [(id: Int64, outcome: WebhookQueueTable.Outcome)] = []
        outcomes.reserveCapacity(items.count)
        try await withThrowingTaskGroup(of: (Int64, WebhookQueueTable.Outcome).self) { group in
            var iterator = requests.makeIterator()
            func addNext() -> Bool {
                guard let (item, body) = iterator.next() else { return false }
                group.addTask { (item.id, await send(item, body: body, endpoint: endpoint, client: client, now: now)) }
                return true
            }
            for _ in 0..<endpoint.concurrency where !addNext() { break }
            while let result = try await group.next() {
                outcomes.append(result)
                _ = addNext()
            }
        }
        return outcomes
    }

    /// Each claimed item with the body to send (nil: nothing left to send — the event or notification is gone).
    private func prepare(_ items: [WebhookQueueTable.Item], endpoint: WebhookConfiguration) async throws -> [(WebhookQueueTable.Item, ByteBuffer?)] {
        switch endpoint.kind {
        case .events:
            let events = try await queue.events(items.compactMap(\.eventPosition))
            // Each user's state once, read for the whole round together.
            let users = Array(Set(events.values.map(\.event.user).filter { !$0.isNobody }))
            let states = try await self.states(users, Date())
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            var prepared: [(WebhookQueueTable.Item, ByteBuffer?)] = []
            for item in items {
                guard let stored = item.eventPosition.flatMap({ events[$0] }) else {
                    prepared.append((item, nil))
                    continue
                }
                let user = stored.event.user
                // An event about no known user has no user and no state; any other user without a state is gone.
                let userState = states[user]
                guard userState != nil || user.isNobody else {
                    prepared.append((item, nil))
                    continue
                }
                let body = WebhookEventBody(
                    id: stored.position,
                    type: stored.event.type.rawValue,
                    occurredAt: stored.event.occurredAt,
                    user: user.isNobody ? nil : user.rawValue,
                    sequence: stored.userSequence,
                    subject: stored.event.subject,
                    change: stored.event.details,
                    state: userState
                )
                prepared.append((item, ByteBuffer(bytes: try encoder.encode(body))))
            }
            return prepared
        case .apple:
            var prepared: [(WebhookQueueTable.Item, ByteBuffer?)] = []
            for item in items {
                let body = try await item.notificationId.asyncMap { try await inbox.find($0) }??.received.body
                prepared.append((item, body.map { ByteBuffer(string: $0) }))
            }
            return prepared
        }
    }

    /// POSTs one item; `now` is the pass's clock, which retries are scheduled from.
    private func send(
        _ item: WebhookQueueTable.Item,
        body: ByteBuffer?,
        endpoint: WebhookConfiguration,
        client: HTTPClient,
        now: Date
    ) async
        -> WebhookQueueTable.Outcome
    {
        guard let body else {
            metrics.webhook(endpoint: endpoint.name, result: "dead", nanoseconds: 0)
            return .failed(status: nil, error: "the event or notification no longer exists", retryAt: nil)
        }
        var request = HTTPClientRequest(url: endpoint.url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Storekeeper")
        request.headers.add(name: "Storekeeper-Endpoint", value: endpoint.name)
        request.headers.add(name: "Storekeeper-Delivery", value: String(item.id))
        request.headers.add(name: "Storekeeper-Attempt", value: String(item.attempts))
        if let position = item.eventPosition { request.headers.add(name: "Storekeeper-Event-Id", value: String(position)) }
        if let notification = item.notificationId { request.headers.add(name: "Storekeeper-Notification-Id", value: notification) }
        if !endpoint.secrets.isEmpty {
            request.headers.add(
                name: WebhookSignature.header,
                value: WebhookSignature.sign(body.readableBytesView, secrets: endpoint.secrets, time: Date())
            )
        }
        request.body = .bytes(body)
        let started = DispatchTime.now().uptimeNanoseconds
        var status: Int?
        var failure: String
        do {
            let response = try await client.execute(request, timeout: .seconds(endpoint.timeout.components.seconds))
            status = Int(response.status.code)
            // The answer's body is read (bounded) so the connection can be reused, and kept for the dead letter.
            let answer = try? await response.body.collect(upTo: 4_096)
            if (200..<300).contains(response.status.code) {
                metrics.webhook(endpoint: endpoint.name, result: "delivered", nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
                return .delivered(status: Int(response.status.code))
            }
            failure = "HTTP \(response.status.code): " + (answer.map { String(buffer: $0).prefix(200) } ?? "")
        } catch {
            failure = "\(error)"
        }
        let elapsed = DispatchTime.now().uptimeNanoseconds - started
        let retryAt = Self.retryAt(attempts: item.attempts, createdAt: item.createdAt, maximumAge: endpoint.maximumAge, now: now)
        metrics.webhook(endpoint: endpoint.name, result: retryAt == nil ? "dead" : "failed", nanoseconds: elapsed)
        if retryAt == nil {
            logger.error(
                "webhook delivery given up",
                metadata: ["endpoint": "\(endpoint.name)", "delivery": "\(item.id)", "attempts": "\(item.attempts)", "error": "\(failure)"]
            )
        }
        return .failed(status: status, error: failure, retryAt: retryAt)
    }

    /// Exponential backoff with full jitter: about 1 s, 2 s, 4 s … capped at an hour; nil once the delivery is older
    /// than `maximumAge` (a dead letter).
    static func retryAt(attempts: Int, createdAt: Date, maximumAge: Duration, now: Date) -> Date? {
        let age = now.timeIntervalSince(createdAt)
        guard age < Double(maximumAge.components.seconds) else { return nil }
        let ceiling = min(3_600, pow(2, Double(min(max(attempts - 1, 0), 12))))
        let delay = Double.random(in: (ceiling / 2)...ceiling)
        return now.addingTimeInterval(delay)
    }
}

/// The JSON body of one event: what changed and the user's whole state after it, so the receiver never has to ask.
struct WebhookEventBody: Encodable {
    /// The event's id: its position in the outbox (the same in a retry or a replay).
    var id: Int64
    var type: String
    var occurredAt: Date
    /// Absent for an event about no known user (a dead letter whose transaction nobody holds).
    var user: String?
    /// The user's own sequence number: gap-free, in commit order (events about no known user count on their own).
    var sequence: Int64
    var subject: String
    var change: [String: String]
    /// The user's entitlements, wallet and subscriptions when the event is sent; absent when there is no user.
    var state: WebhookState?
}

/// What a backend acts on: the user's entitlements, wallet and subscriptions, as `GET /v1/admin/users/{id}` shows
/// them (without the purchase and order history).
struct WebhookState: Encodable, Sendable {
    var asOf: Date
    var guest: Bool
    var entitlements: [Components.Schemas.Entitlement]
    var wallet: Components.Schemas.User.WalletPayload
    var subscriptions: [Components.Schemas.Subscription]
}

/// What ``WebhookDelivery`` counts toward its next refresh of the queue's statistics.
private final class StatisticsTrigger: Sendable {
    let state = Mutex<(queued: Int, refreshed: ContinuousClock.Instant?)>((0, nil))
}
