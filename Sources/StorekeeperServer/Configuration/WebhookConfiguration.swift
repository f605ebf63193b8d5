import Foundation
import StorekeeperCore

/// One place the app's backend listens: Storekeeper's own events (``Kind/events``), or Apple's notifications
/// forwarded as Apple sent them (``Kind/apple``), POSTed with a `Storekeeper-Signature` header.
public struct WebhookConfiguration: Sendable, Hashable {
    /// What an endpoint is sent.
    public enum Kind: String, Sendable, Hashable {
        /// Storekeeper's outbox: one event per change, with the user's state after it.
        case events
        /// Every verified App Store Server Notification, its body byte for byte.
        case apple
    }

    public var name: String
    public var url: URL
    public var kind: Kind
    /// HMAC-SHA256 keys: every one signs (two during a rotation); the first is the current one.
    public var secrets: [String]
    /// Event types sent (exact, or a prefix ending in `.*`); empty sends every type.
    public var eventTypes: [String]
    /// Bundle ids whose notifications (`apple`) or purchase events (`events`) the endpoint is sent; empty: every
    /// app's. Events about the user as a whole (wallet, entitlements, merges) belong to no one app and always go.
    public var bundleIds: [String]
    /// Deliveries in flight at once (to different users).
    public var concurrency: Int
    /// How long one POST may take.
    public var timeout: Duration
    /// How long a delivery is retried before it becomes a dead letter.
    public var maximumAge: Duration

    public init(
        name: String,
        url: URL,
        kind: Kind = .events,
        secrets: [String],
        eventTypes: [String] = [],
        bundleIds: [String] = [],
        concurrency: Int = 32,
        timeout: Duration = .seconds(10),
        maximumAge: Duration = .seconds(72 * 3_600)
    ) {
        self.name = name
        self.url = url
        self.kind = kind
        self.secrets = secrets
        self.eventTypes = eventTypes
        self.bundleIds = bundleIds
        self.concurrency = concurrency
        self.timeout = timeout
        self.maximumAge = maximumAge
    }

    /// Whether an event of `type` about a purchase in `bundleId` (nil: not about one app's purchase) goes to this
    /// endpoint.
    public func accepts(type: String, bundleId: String?) -> Bool {
        guard accepts(type: type) else { return false }
        guard !bundleIds.isEmpty, let bundleId else { return true }
        return bundleIds.contains(bundleId)
    }

    /// Whether an event of `type` goes to this endpoint.
    public func accepts(type: String) -> Bool {
        guard kind == .events else { return false }
        guard !eventTypes.isEmpty else { return true }
        return eventTypes.contains { pattern in
            pattern.hasSuffix(".*") ? type.hasPrefix(pattern.dropLast()) : pattern == type
        }
    }

    /// Reads `webhooks.<name>.*`: `url` (required, http or https), `kind` (`events` or `apple`), `secrets` (secret;
    /// one or two keys of 32+ characters, required for `events`), `events` (types or `prefix.*`; default all),
    /// `apps` (app names whose notifications, or whose purchases' events, the endpoint is sent; default all), `concurrency` (32; 1-256),
    /// `timeoutSeconds` (10; 1-60), `maxAgeHours` (72; 1-168). Environment form: `WEBHOOKS=crm`,
    /// `WEBHOOKS_CRM_URL=…`, `WEBHOOKS_CRM_SECRETS=…`.
    init(name: String, reader: StrictConfigReader, apps: [AppConfiguration]) throws {
        func invalid(_ message: String) -> ConfigurationError { .invalid("webhooks.\(name).\(message)") }
        guard let text = try reader.string("url") else { throw ConfigurationError.missing("webhooks.\(name).url") }
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw invalid("url is not an http(s) URL")
        }
        let kind = Kind(rawValue: try reader.choice("kind", ["events", "apple"], default: "events")) ?? .events
        let secrets = try reader.list("secrets", isSecret: true) ?? []
        if kind == .events && secrets.isEmpty { throw ConfigurationError.missing("webhooks.\(name).secrets") }
        guard secrets.count <= 2, secrets.allSatisfy({ $0.utf8.count >= 32 && $0.utf8.count <= 256 }) else {
            throw invalid("secrets must be one or two keys of 32 to 256 characters")
        }
        let known = Set(LedgerEvent.EventType.allCases.filter { $0 != .unknown }.map(\.rawValue))
        let types = try reader.list("events") ?? []
        for pattern in types where pattern != "*" {
            let matches = pattern.hasSuffix(".*") ? known.contains { $0.hasPrefix(pattern.dropLast()) } : known.contains(pattern)
            guard matches else { throw invalid("events: \(pattern) names no event type (\(known.sorted().joined(separator: ", ")))") }
        }
        var bundleIds: [String] = []
        for app in try reader.list("apps") ?? [] {
            guard let found = apps.first(where: { $0.name == app }) else { throw invalid("apps: \(app) is not a configured app") }
            bundleIds.append(found.bundleId)
        }
        self.init(
            name: name,
            url: url,
            kind: kind,
            secrets: secrets,
            eventTypes: types.contains("*") ? [] : types,
            bundleIds: bundleIds,
            concurrency: try reader.int("concurrency", in: 1...256, default: 32),
            timeout: .seconds(try reader.int("timeoutSeconds", in: 1...60, default: 10)),
            maximumAge: .seconds(3_600 * (try reader.int("maxAgeHours", in: 1...168, default: 72)))
        )
    }
}
