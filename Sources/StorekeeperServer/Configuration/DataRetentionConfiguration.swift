import Foundation

/// How long Storekeeper keeps what only grows (`dataRetention.*`): the outbox's events, Apple's applied notifications
/// and the audit log. A record is pruned once it is older than its age — and, for events and notifications, once every
/// configured webhook endpoint of its kind has received it (a paused or failing endpoint holds everything it has not).
/// Consumers polling `GET /v1/admin/events` must read within the events' age.
public struct DataRetentionConfiguration: Sendable, Hashable {
    /// Outbox events older than this go (nil: kept for good).
    public var events: Duration?
    /// Applied notifications (the inbox) older than this go; pending and dead-lettered ones stay.
    public var notifications: Duration?
    /// Audit entries older than this go (nil, the default: kept for good).
    public var audit: Duration?
    /// How often the pruning job runs (nil: only on demand, `POST /v1/admin/jobs/prune/run`).
    public var interval: Duration?
    /// Rows deleted per statement (one short write transaction each).
    public var batchSize: Int

    public init(
        events: Duration? = .seconds(90 * 86_400),
        notifications: Duration? = .seconds(90 * 86_400),
        audit: Duration? = nil,
        interval: Duration? = .seconds(3_600),
        batchSize: Int = 1_000
    ) {
        self.events = events
        self.notifications = notifications
        self.audit = audit
        self.interval = interval
        self.batchSize = batchSize
    }

    /// Reads `dataRetention.*`: `eventDays` (90; 0 keeps them), `notificationDays` (90; 0 keeps them), `auditDays` (0:
    /// kept for good), `intervalSeconds` (3600; 0: on demand only), `batchSize` (1000; 1-10000).
    init(reader: StrictConfigReader) throws {
        func days(_ key: String, default fallback: Int) throws -> Duration? {
            let value = try reader.int(key, in: 0...36_500, default: fallback)
            return value == 0 ? nil : .seconds(value * 86_400)
        }
        let seconds = try reader.int("intervalSeconds", in: 0...(7 * 86_400), default: 3_600)
        self.init(
            events: try days("eventDays", default: 90),
            notifications: try days("notificationDays", default: 90),
            audit: try days("auditDays", default: 0),
            interval: seconds == 0 ? nil : .seconds(seconds),
            batchSize: try reader.int("batchSize", in: 1...10_000, default: 1_000)
        )
    }
}
